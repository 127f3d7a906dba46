// fuzz_differential judges an input as `aotfuzz run` judges its graph: the target's path (the
// cases compiled against the runner's shared runtime, one per program) and run_case (one
// program compiled by the tcc command) give the same signature on the byte seeds and on a
// thousand inputs decoded from random bytes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "fuzz/targets/target_support.h"
#include "generator/builder.h"
#include "ir/rng.h"
#include "oracle/executor.h"
#include "oracle/verdict.h"

namespace aotfuzz::fuzz::targets {
namespace {

std::vector<std::string> seeds_and_random_inputs(int random) {
  std::vector<std::string> inputs;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(
           std::string(AOTFUZZ_SOURCE_DIR) + "/fuzz/targets/seeds/fuzz_pipeline")) {
    files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    std::ifstream in(f, std::ios::binary);
    inputs.emplace_back(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  ir::Rng rng(9036);
  for (int i = 0; i < random; ++i) {
    std::string bytes(8 + rng.below(120), '\0');
    for (auto& b : bytes) b = static_cast<char>(rng.below(256));
    inputs.push_back(std::move(bytes));
  }
  return inputs;
}

// Inputs [from, to) of the seeds followed by a thousand random ones, judged both ways.
void expect_parity(std::size_t from, std::size_t to) {
  if (!oracle::batched_execution_available(host::CompilerKind::kTcc)) {
    GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  }
  const auto inputs = seeds_and_random_inputs(1000);
  ASSERT_GE(inputs.size(), to);
  oracle::BatchedExecutor executor;
  int findings = 0, passes = 0;
  for (std::size_t i = from; i < to; ++i) {
    const std::string& input = inputs[i];
    const auto* data = reinterpret_cast<const std::uint8_t*>(input.data());
    const auto annotated = generator::decode(fuzz_policy(), data + 1, input.size() - 1);
    oracle::CaseOptions options = case_options(data[0]);
    const oracle::CaseResult fast = differential_verdict(annotated, options, executor);
    options.compiler = host::CompilerKind::kTcc;
    const oracle::CaseResult alone = oracle::run_case(annotated, options);
    ASSERT_EQ(oracle::signature(fast.verdict), oracle::signature(alone.verdict))
        << oracle::summary(fast.verdict) << "\nrun_case: " << oracle::summary(alone.verdict)
        << "\n" << finding_context(annotated, options);
    findings += oracle::is_finding(fast.verdict) ? 1 : 0;
    passes += fast.verdict.kind() == oracle::VerdictKind::kPass ? 1 : 0;
  }
  // The inputs reach the run: most pass, and nothing is a finding without an injected bug.
  EXPECT_GT(passes, static_cast<int>(to - from) / 2);
  EXPECT_EQ(findings, 0);
  EXPECT_EQ(executor.whole_program_retries(), 0);
}

// Two halves, so that ctest runs them side by side.
TEST(FuzzDifferential, JudgesItsSeedsAndTheFirstHalfOfAThousandInputsAsRunCaseDoes) {
  expect_parity(0, 507);
}

TEST(FuzzDifferential, JudgesTheSecondHalfOfAThousandDecodedInputsAsRunCaseDoes) {
  expect_parity(507, 1007);
}

}  // namespace
}  // namespace aotfuzz::fuzz::targets

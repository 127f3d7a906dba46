// libFuzzer target fuzz_differential: fuzz_pipeline's decoder, then the whole out-of-process
// oracle: the emitted C compiled in memory by libtcc (linked statically: no C compiler needed at
// run time) against the harness runtime compiled once, and run in a child of the runner under
// the case's limits, through the same executor and runner campaigns use (oracle::BatchedExecutor);
// judged by judge_case, as run_case judges. The runner is this executable started again with
// runner::kServeEnv set (OSS-Fuzz ships nothing but the target). Builds without libtcc fall back
// to run_case with an installed compiler, and without one every input is skipped (said once at
// start-up).
//
// A graph judged before in this process is not judged again (AOTFUZZ_MEMO=0 judges every
// input): many of libFuzzer's mutations decode to a graph already seen, and a verdict depends on
// nothing but the graph, the flags byte and the injected bugs. A finding is never remembered, as
// it ends the process.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "fuzz/targets/crash_sites.h"
#include "fuzz/targets/target_support.h"
#include "generator/builder.h"
#include "host/toolchain.h"
#include "ir/structural.h"
#include "oracle/executor.h"
#include "oracle/runner/runner.h"

namespace targets = aotfuzz::fuzz::targets;
namespace host = aotfuzz::host;
namespace oracle = aotfuzz::oracle;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AOTFUZZ_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AOTFUZZ_UNDER_ASAN 1
#endif

namespace {
// Looked up once (a lookup runs the compiler).
std::optional<host::Toolchain> toolchain;
std::unique_ptr<oracle::BatchedExecutor> executor;

// The graphs judged so far with their flags bytes, by structural hash; cleared when full, so a
// long run's memory stays bounded.
class JudgedGraphs {
 public:
  bool contains(std::size_t hash, const aotfuzz::ir::Module& m, std::uint8_t flags) const {
    const auto it = by_hash_.find(hash);
    if (it == by_hash_.end()) return false;
    for (const auto& [f, seen] : it->second) {
      if (f == flags && aotfuzz::ir::structural_equal(seen, m)) return true;
    }
    return false;
  }
  void add(std::size_t hash, const aotfuzz::ir::Module& m, std::uint8_t flags) {
    if (++size_ > kCapacity) {
      by_hash_.clear();
      size_ = 1;
    }
    by_hash_[hash].emplace_back(flags, m);
  }

 private:
  static constexpr std::size_t kCapacity = std::size_t{1} << 15;
  std::unordered_map<std::size_t, std::vector<std::pair<std::uint8_t, aotfuzz::ir::Module>>>
      by_hash_;
  std::size_t size_ = 0;
};
std::optional<JudgedGraphs> judged;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  oracle::runner::serve_as_runner_if_asked();
  if (oracle::runner::have_libtcc() && !oracle::runner::self_executable().empty()) {
    oracle::BatchOptions options;
    options.compiler = host::CompilerKind::kTcc;
    options.runner = oracle::runner::self_executable();
    options.runner_env = {std::string(oracle::runner::kServeEnv) + "=1"};
    executor = std::make_unique<oracle::BatchedExecutor>(options);
  } else {
    toolchain = host::default_toolchain();
  }
  const char* memo = std::getenv("AOTFUZZ_MEMO");
  if (memo == nullptr || std::strcmp(memo, "0") != 0) judged.emplace();
  std::fprintf(stderr, "fuzz_differential: injected bugs: %s; %s; %s\n",
               targets::injected_bug_names().c_str(),
               judged ? "a graph judged before is not judged again (AOTFUZZ_MEMO=0: every input)"
                      : "every input judged",
               executor    ? "libtcc in its runner"
               : toolchain ? "C compiler found"
                           : "no libtcc and no C compiler (tcc, gcc, clang): skipping every input");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || (!executor && !toolchain)) return 0;
  const auto annotated = aotfuzz::generator::decode(targets::fuzz_policy(), data + 1, size - 1);
  const std::size_t hash = judged ? aotfuzz::ir::structural_hash(annotated) : 0;
  if (judged && judged->contains(hash, annotated, data[0])) return 0;
  oracle::CaseOptions options = targets::case_options(data[0]);
  oracle::CaseResult r;
  if (executor) {
#ifdef AOTFUZZ_UNDER_ASAN
    // AddressSanitizer reserves terabytes of address space: the child cannot live under
    // RLIMIT_AS (libFuzzer's -rss_limit_mb bounds memory instead).
    options.limits.address_space = 0;
#endif
    r = targets::differential_verdict(annotated, options, *executor);
  } else {
    options.compiler = toolchain->kind;
    options.toolchain = toolchain;
    r = oracle::run_case(annotated, options);
  }
  if (oracle::is_finding(r.verdict)) {
    targets::report_finding(r.verdict, targets::finding_context(annotated, options));
  }
  // A toolchain error says something about this machine at that moment, not about the graph.
  if (judged && r.verdict.kind() != oracle::VerdictKind::kToolchainError) {
    judged->add(hash, annotated, data[0]);
  }
  return 0;
}

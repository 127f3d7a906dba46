// Fault tests of the command line (items of the hardening issue that a user's machine provokes):
// sanitized programs under the default budgets, graphs over the memory budget refused before
// anything is allocated, knobs asking for huge tensors, and output paths that cannot be written,
// found before the work rather than after it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>

#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"

namespace aotfuzz::cli::test {
namespace {

namespace fs = std::filesystem;

const std::string kSeed = "corpus/seed/tvm_9036_annotated.relay";

TEST(EnvironmentFaults, SanitizeWithoutACompilerPicksOneWithSanitizersAndPasses) {
  const host::RunResult r = run_aotfuzz({"run", kSeed, "--sanitize"});
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("signature: pass:run"), std::string::npos) << r.stdout_text;
  expect_one_line_usage_error({"run", kSeed, "--sanitize", "--cc", "tcc"}, "--sanitize");
}

TEST(EnvironmentFaults, AGraphOverTheMemoryBudgetIsInvalidInputForEveryCommandBeforeAllocating) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string big = dir.file("big.relay").string();
  // 1 GiB in, 1 GiB out: over the default budget, and refused before either is allocated.
  std::ofstream(big) << "def @main(%x: Tensor[(268435456), float32]) {\n  add(%x, %x)\n}\n";
  const host::RunResult run = run_aotfuzz({"run", big}, 30);
  EXPECT_EQ(run.exit_code, 2) << run.stdout_text << run.stderr_text;
  EXPECT_NE(run.stdout_text.find("invalid-input at annotated: the graph's tensors need 2048 MiB"),
            std::string::npos)
      << run.stdout_text;
  expect_one_line_usage_error({"compile", big, "--emit", "c"}, "memory budget");
  expect_one_line_usage_error({"compile", big, "--emit", "partitioned"}, "memory budget");
  // A budget raised by the flag lets the static stages through (nothing is allocated there).
  const host::RunResult raised =
      run_aotfuzz({"compile", big, "--emit", "partitioned", "--memory-budget", "4096"}, 30);
  EXPECT_EQ(raised.exit_code, 0) << raised.stderr_text;
}

TEST(EnvironmentFaults, KnobsForHugeTensorsGiveACampaignWithoutFindingsThatEndsOnTime) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string stats = dir.file("stats.json").string();
  const host::RunResult r = run_aotfuzz(
      {"fuzz", "--cases", "6", "--seed", "1", "--jobs", "1", "--findings",
       dir.file("findings").string(), "--stats", stats, "--knob", "min_rank=3", "--knob",
       "max_rank=3", "--knob", "min_dim=1024", "--knob", "max_dim=1024", "--knob",
       "max_tensor_elements=1048576", "--knob", "max_ops=3", "--memory-budget", "10"},
      300);
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  std::ifstream in(stats);
  const auto j = nlohmann::json::parse(in);
  EXPECT_EQ(j["findings"]["unique"], 0) << j.dump();
  EXPECT_EQ(j["cases"].get<int>() + j["over_budget"].get<int>(), 6) << j.dump();
  EXPECT_GT(j["over_budget"].get<int>(), 0) << "4 MiB tensors: some graphs pass 10 MiB";
}

std::string slurp(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(EnvironmentFaults, ReplayWithoutACCompilerExits3AndReportsErrorsNotFailures) {
  host::TempDir dir("aotfuzz-cli-test");
  fs::create_directories(dir.file("empty-bin"));
  const std::string junit = dir.file("replay.xml").string();
  const host::RunResult r = run_aotfuzz({"replay", "corpus/seed", "--jobs", "1", "--junit", junit},
                                        120, {{"PATH", dir.file("empty-bin").string()}});
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("FAIL"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("could not run (the environment, not the pipeline: "),
            std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find(" 0 failed"), std::string::npos) << r.stdout_text;
  const std::string xml = slurp(junit);
  EXPECT_NE(xml.find("<error message=\"could not run"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  EXPECT_NE(xml.find("failures=\"0\""), std::string::npos) << xml;
}

TEST(EnvironmentFaults, CheckOnATvmThatDoesNotImportExits3WithoutSayingItFailed) {
  host::TempDir dir("aotfuzz-cli-test");
  // A graph TVM would compile (the seed's partitioned twin has two functions, which TVM's
  // driver refuses whether it imports or not).
  fs::create_directories(dir.file("corpus"));
  fs::copy_file(std::string(AOTFUZZ_SOURCE_DIR) + "/" + kSeed, dir.file("corpus") / "seed.relay");
  const std::string junit = dir.file("check.xml").string();
  const host::RunResult r =
      run_aotfuzz({"check", "--corpus", dir.file("corpus").string(), "--sut", "tvm", "--tvm-home",
                   std::string(AOTFUZZ_SOURCE_DIR) + "/tests/tvm/fake_tvm_broken", "--jobs", "1",
                   "--time", "600", "--findings", dir.file("findings").string(), "--junit", junit},
                  120);
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("FAILED"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("aotfuzz check: could not run"), std::string::npos) << r.stdout_text;
  const std::string xml = slurp(junit);
  EXPECT_NE(xml.find("<error "), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
}

// Output paths under a regular file: unwritable even for root, who ignores permissions.
class UnwritableOutput : public ::testing::Test {
 protected:
  void SetUp() override { std::ofstream(dir_.file("plain")) << "not a directory\n"; }
  std::string under_file(const std::string& name) const {
    return (dir_.file("plain") / name).string();
  }
  host::TempDir dir_{"aotfuzz-cli-test"};
};

TEST_F(UnwritableOutput, FuzzStatsAndFindingsFailBeforeTheCampaignStarts) {
  const std::string findings = dir_.file("findings").string();
  expect_one_line_usage_error(
      {"fuzz", "--cases", "1", "--findings", findings, "--stats", under_file("s.json")}, "--stats");
  expect_one_line_usage_error({"fuzz", "--cases", "1", "--findings", under_file("f")},
                              "--findings");
  // The probe leaves nothing behind.
  EXPECT_FALSE(fs::exists(findings));
}

TEST_F(UnwritableOutput, CheckAndReplayJunitFailBeforeReplaying) {
  expect_one_line_usage_error({"check", "--junit", under_file("j.xml")}, "--junit");
  expect_one_line_usage_error({"check", "--findings", under_file("f")}, "--findings");
  expect_one_line_usage_error({"replay", "corpus/seed", "--junit", under_file("j.xml")}, "--junit");
  expect_one_line_usage_error({"replay", "corpus/seed", "--junit", dir_.path().string()},
                              "is a directory");
}

TEST_F(UnwritableOutput, ReduceOutFailsBeforeReducing) {
  expect_one_line_usage_error(
      {"reduce", kSeed, "--inject", "tuple-arg-first-field", "--out", under_file("r.relay")},
      "--out");
}

}  // namespace
}  // namespace aotfuzz::cli::test

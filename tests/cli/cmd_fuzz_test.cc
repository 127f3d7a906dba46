// Fault tests of `aotfuzz fuzz` (cli/cmd_fuzz.cc): a reader that goes away (`aotfuzz fuzz | head`)
// must not take the campaign's summary, findings or exit code with it, and a pass that crashes or
// hangs inside aotfuzz's own process is a finding of a campaign that goes on, and a broken
// temporary directory is the environment's failure, never a finding.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include <nlohmann/json.hpp>

#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"

namespace aotfuzz::cli::test {
namespace {

TEST(FuzzOutput, AClosedStdoutMovesFindingsAndTheSummaryToStderrAndKeepsTheExitCode) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string findings = dir.file("findings").string();
  const Spawned r =
      spawn_aotfuzz({"fuzz", "--cases", "40", "--jobs", "1", "--seed", "1", "--inject",
                     "tuple-arg-first-field", "--no-reduce", "--findings", findings},
                    "", /*closed_stdout=*/true);
  ASSERT_FALSE(WIFSIGNALED(r.status)) << "killed by signal " << WTERMSIG(r.status) << "\n" << r.err;
  ASSERT_TRUE(WIFEXITED(r.status));
  // The injected bug is found within 40 cases of seed 1: exit 1, as with an open stdout.
  EXPECT_EQ(WEXITSTATUS(r.status), 1) << r.err;
  EXPECT_NE(r.err.find("aotfuzz fuzz: seed 1 (shard 0/1"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("finding: arity:codegen:kernel"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("replay: aotfuzz run "), std::string::npos) << r.err;
  // The closing summary (fuzz::format_summary) after the last finding.
  EXPECT_NE(r.err.find("aotfuzz fuzz: seed 1, shard"), std::string::npos) << r.err;
  EXPECT_TRUE(std::filesystem::is_directory(findings));
}

TEST(FuzzEnvironment, ABrokenTempDirectoryIsAToolchainErrorPerCaseNeverAFinding) {
  // TMPDIR under a regular file: every case's directory fails, as on a full or broken disk.
  host::TempDir dir("aotfuzz-cli-test");
  { std::ofstream(dir.file("plain")) << "not a directory\n"; }
  const std::string findings = dir.file("findings").string();
  const host::RunResult r = run_aotfuzz({"fuzz", "--cases", "20", "--jobs", "1", "--seed", "1",
                                         "--cc", "gcc", "--findings", findings},
                                        300, {{"TMPDIR", (dir.file("plain") / "tmp").string()}});
  EXPECT_EQ(r.exit_code, 3) << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("toolchain error (not a finding"), std::string::npos)
      << r.stderr_text;
  // Every case that reaches the compiler is a toolchain error (a graph the reference refuses
  // never gets there): nothing passes and nothing is a finding.
  EXPECT_NE(r.stdout_text.find("toolchain-error"), std::string::npos) << r.stdout_text;
  EXPECT_EQ(r.stdout_text.find("verdicts: pass"), std::string::npos) << r.stdout_text;
  EXPECT_EQ(r.stdout_text.find(" pass "), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("findings: 0 cases"), std::string::npos) << r.stdout_text;
  // No bundle: the directory holds the campaign's status files only.
  for (const auto& e : std::filesystem::directory_iterator(findings)) {
    EXPECT_FALSE(std::filesystem::exists(e.path() / "verdict.json")) << e.path();
  }
}

TEST(FuzzOutput, QuietAndTheLogLevelSilenceTheLogButNotTheFindingsOrTheSummary) {
  host::TempDir dir("aotfuzz-cli-test");
  auto campaign = [&](const std::vector<std::string>& extra) {
    std::vector<std::string> args = {
        "fuzz",        "--cases",    "40",
        "--jobs",      "1",          "--seed",
        "1",           "--inject",   "tuple-arg-first-field",
        "--no-reduce", "--findings", dir.file("f" + std::to_string(extra.size())).string()};
    args.insert(args.end(), extra.begin(), extra.end());
    return run_aotfuzz(args);
  };
  const host::RunResult loud = campaign({});
  EXPECT_EQ(loud.exit_code, 1) << loud.stderr_text;
  EXPECT_NE(loud.stderr_text.find("aotfuzz: new finding arity:codegen:kernel"), std::string::npos)
      << loud.stderr_text;
  for (const std::vector<std::string>& extra :
       {std::vector<std::string>{"--quiet"}, std::vector<std::string>{"--log-level", "warn"}}) {
    const host::RunResult r = campaign(extra);
    EXPECT_EQ(r.exit_code, 1) << extra[0] << "\n" << r.stderr_text;
    EXPECT_EQ(r.stderr_text.find("new finding"), std::string::npos) << extra[0];
    EXPECT_NE(r.stdout_text.find("finding: arity:codegen:kernel"), std::string::npos) << extra[0];
    EXPECT_NE(r.stdout_text.find("aotfuzz fuzz: seed 1, shard"), std::string::npos) << extra[0];
  }
  const host::RunResult bad = run_aotfuzz({"fuzz", "--cases", "1", "--log-level", "loud"});
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(line_count(bad.stderr_text), 1) << bad.stderr_text;
}

TEST(FuzzInProcessFaults, APassThatCrashesIsABundledReducedFindingAndTheCampaignEnds) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string findings = dir.file("findings").string();
  const std::string stats = dir.file("stats.json").string();
  const host::RunResult r =
      run_aotfuzz({"fuzz", "--cases", "12", "--jobs", "2", "--seed", "5", "--debug-fault",
                   "fuse:crash", "--reduce-time", "20", "--findings", findings, "--stats", stats});
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("finding: crash:fuse:SIGSEGV"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("took the campaign down (it died of SIGSEGV)"), std::string::npos)
      << r.stderr_text;
  // One header, one summary, every case counted across the restarts.
  EXPECT_EQ(r.stdout_text.find("aotfuzz fuzz: seed 5 (shard"),
            r.stdout_text.rfind("aotfuzz fuzz: seed 5 (shard"))
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("aotfuzz fuzz: seed 5, shard 0/1: 12 cases"), std::string::npos)
      << r.stdout_text;
  // The bundle an earlier child wrote is this run's finding, and every crash case is a hit.
  EXPECT_NE(r.stdout_text.find("(1 new, 0 already bundled)"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("copy its reduced.relay into corpus/regressions/"),
            std::string::npos)
      << r.stdout_text;
  const host::RunResult listed = run_aotfuzz({"findings", findings, "--json"});
  const auto bundles = nlohmann::json::parse(listed.stdout_text);
  ASSERT_EQ(bundles.size(), 1u) << listed.stdout_text;
  EXPECT_EQ(bundles[0].at("hits").get<int>(), 12) << listed.stdout_text;
  const std::filesystem::path bundle = std::filesystem::path(findings) / "crash_fuse_SIGSEGV";
  ASSERT_TRUE(std::filesystem::exists(bundle / "reduced.relay")) << r.stderr_text;
  EXPECT_TRUE(std::filesystem::exists(stats));
  // The bundle's replay reproduces the crash as a verdict, in a process that survives it.
  const host::RunResult replay =
      run_aotfuzz({"run", (bundle / "reduced.relay").string(), "--debug-fault", "fuse:crash"});
  EXPECT_EQ(replay.exit_code, 1) << replay.stderr_text;
  EXPECT_NE(replay.stdout_text.find("signature: crash:fuse:SIGSEGV"), std::string::npos)
      << replay.stdout_text;
  const host::RunResult check = run_aotfuzz({"replay", (bundle / "reduced.relay").string()});
  EXPECT_EQ(check.exit_code, 0) << check.stdout_text << check.stderr_text;
}

TEST(FuzzTvm, ACampaignOnATvmThatDoesNotImportStopsAtOnceAndExits3WithNoBundle) {
  // Default knobs: graphs with constants and odd input names reach the driver too.
  host::TempDir dir("aotfuzz-cli-test");
  const std::filesystem::path findings = dir.file("findings");
  const host::RunResult r =
      run_aotfuzz({"fuzz", "--sut", "tvm", "--tvm-home",
                   std::string(AOTFUZZ_SOURCE_DIR) + "/tests/tvm/fake_tvm_broken", "--time", "600",
                   "--seed", "7", "--findings", findings.string()},
                  90);
  // It stops at TVM's first answer rather than burning its 600 s (the run would be killed).
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("the system under test cannot be used, so the campaign stops"),
            std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("stopped early: the system under test cannot be used"),
            std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("0 unique signatures"), std::string::npos) << r.stdout_text;
  for (const auto& e : std::filesystem::directory_iterator(findings)) {
    EXPECT_FALSE(std::filesystem::exists(e.path() / "verdict.json")) << e.path();
  }
}

TEST(FuzzInProcessFaults, APassThatWritesPastAHeapBlockIsABundledCrashFindingOfThatPass) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string findings = dir.file("findings").string();
  // Under AddressSanitizer the write is a report, made an abort so that it is a crash.
  const host::RunResult r =
      run_aotfuzz({"fuzz", "--cases", "12", "--jobs", "2", "--seed", "5", "--debug-fault",
                   "fuse:overflow", "--no-reduce", "--findings", findings},
                  120, {{"ASAN_OPTIONS", "abort_on_error=1:detect_leaks=0"}});
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("finding: crash:fuse:SIGABRT"), std::string::npos)
      << r.stdout_text << r.stderr_text;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(findings) / "crash_fuse_SIGABRT"));
}

TEST(FuzzInProcessFaults, APassThatHangsIsATimeoutFindingWithinItsBudget) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string findings = dir.file("findings").string();
  const host::RunResult r = run_aotfuzz({"fuzz", "--cases", "3", "--jobs", "1", "--seed", "5",
                                         "--debug-fault", "partition:hang", "--in-process-time",
                                         "2", "--no-reduce", "--findings", findings});
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("finding: timeout:partition"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("took more than 2000 ms"), std::string::npos) << r.stderr_text;
  EXPECT_TRUE(std::filesystem::exists(std::filesystem::path(findings) / "timeout_partition"));
}

TEST(FuzzCorpus, TheUsersGraphsAreMutatedAndAFindingInOneSaysHowToPrintItAgain) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string findings = dir.file("findings").string();
  const host::RunResult r = run_aotfuzz(
      {"fuzz", "--cases", "12", "--jobs", "1", "--seed", "3", "--corpus", "corpus/seed", "--inject",
       "tuple-arg-first-field", "--merge", "--no-reduce", "--findings", findings});
  EXPECT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  // The bundle of a corpus case names the graph it mutated, and `gen --mutate` prints it again.
  std::ifstream in(std::filesystem::path(findings) / "arity_codegen_kernel" / "verdict.json");
  const auto verdict = nlohmann::json::parse(in, nullptr, false);
  ASSERT_TRUE(verdict.is_object()) << r.stdout_text;
  // Seed 3's first finding is case 1, a mutant of the first corpus file.
  const std::string gen = verdict.at("info").at("gen_command");
  const std::string corpus_file =
      std::string(AOTFUZZ_SOURCE_DIR) + "/corpus/seed/tvm_9036_annotated.relay";
  const std::string prefix = "aotfuzz gen --seed ";
  ASSERT_EQ(gen.rfind(prefix, 0), 0u) << gen;
  const std::string seed = gen.substr(prefix.size(), gen.find(' ', prefix.size()) - prefix.size());
  EXPECT_EQ(gen, prefix + seed + " --mutate " + corpus_file);
  const auto body = [](const std::string& text) {  // the graph without its comment lines
    std::istringstream in(text);
    std::string line, out;
    while (std::getline(in, line)) {
      if (!line.empty() && line.rfind("//", 0) != 0) out += line + "\n";
    }
    return out;
  };
  const auto again = run_aotfuzz({"gen", "--seed", seed, "--mutate", corpus_file});
  std::ifstream original(std::filesystem::path(findings) / "arity_codegen_kernel" /
                         "original.relay");
  std::stringstream original_text;
  original_text << original.rdbuf();
  EXPECT_EQ(body(again.stdout_text), body(original_text.str()));
  // Mutants are a pure function of the seed.
  const auto a = run_aotfuzz(
      {"gen", "--seed", "8", "--count", "3", "--mutate", "corpus/seed/tvm_9036_annotated.relay"});
  const auto b = run_aotfuzz(
      {"gen", "--seed", "8", "--count", "3", "--mutate", "corpus/seed/tvm_9036_annotated.relay"});
  EXPECT_EQ(a.exit_code, 0) << a.stderr_text;
  EXPECT_EQ(a.stdout_text, b.stdout_text);
  EXPECT_NE(a.stdout_text.find("// aotfuzz gen --seed 8 --mutate "), std::string::npos);
  expect_one_line_usage_error(
      {"gen", "--mutate", "corpus/seed/tvm_9036_annotated.relay", "--swarm"}, "--mutate takes no");
}

TEST(FuzzCorpus, AFileOfTheCorpusThatIsNoGraphIsBadInputAtItsPlace) {
  host::TempDir dir("aotfuzz-cli-test");
  std::ofstream(dir.file("bad.relay")) << "def @main(%x: Tensor[(2), float32]) {\n  add(%x\n}\n";
  const std::string bad = dir.file("bad.relay").string();
  expect_one_line_usage_error({"fuzz", "--cases", "2", "--corpus", dir.path().string()},
                              bad + ":3:1");
}

TEST(FuzzStats, FuzzerStatsNameTheCommandLineAndTheVersion) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string findings = dir.file("findings").string();
  const host::RunResult r =
      run_aotfuzz({"fuzz", "--cases", "4", "--jobs", "1", "--seed", "2", "--findings", findings});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  std::ifstream in(std::filesystem::path(findings) / "fuzzer_stats");
  std::stringstream text;
  text << in.rdbuf();
  const std::string stats = text.str();
  EXPECT_NE(stats.find("command_line"), std::string::npos) << stats;
  EXPECT_NE(stats.find("fuzz --cases 4 --jobs 1 --seed 2 --findings"), std::string::npos) << stats;
  EXPECT_NE(stats.find("aotfuzz_version"), std::string::npos) << stats;
  EXPECT_NE(stats.find("(commit "), std::string::npos) << stats;
}

TEST(CheckInProcessFaults, APassThatCrashesIsAFindingInTheGatesReportsNotTheGatesEnd) {
  host::TempDir dir("aotfuzz-cli-test");
  std::filesystem::create_directories(dir.file("corpus"));
  std::filesystem::copy_file(
      std::string(AOTFUZZ_SOURCE_DIR) + "/corpus/conformance/single_op.relay",
      dir.file("corpus") / "single_op.relay");
  const std::string junit = dir.file("junit.xml").string();
  const std::string sarif = dir.file("log.sarif").string();
  const host::RunResult r =
      run_aotfuzz({"check", "--corpus", dir.file("corpus").string(), "--cases", "12", "--jobs", "2",
                   "--shards", "2", "--debug-fault", "fuse:crash", "--findings",
                   dir.file("findings").string(), "--junit", junit, "--sarif", sarif});
  EXPECT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("took the campaign down (it died of SIGSEGV)"), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("aotfuzz check: FAILED"), std::string::npos) << r.stdout_text;
  // Both shards are in the JUnit report, failed; the finding is in the SARIF log.
  std::ifstream j(junit);
  std::stringstream xml;
  xml << j.rdbuf();
  EXPECT_NE(xml.str().find("fuzz shard 0/2"), std::string::npos) << xml.str();
  EXPECT_NE(xml.str().find("fuzz shard 1/2"), std::string::npos) << xml.str();
  EXPECT_NE(xml.str().find("failures=\"2\""), std::string::npos) << xml.str();
  std::ifstream s(sarif);
  std::stringstream log;
  log << s.rdbuf();
  EXPECT_NE(log.str().find("crash:fuse:SIGSEGV"), std::string::npos) << log.str();
  // What crashed where, in both reports, though a restarted child reported the finding.
  EXPECT_NE(log.str().find("\"text\": \"crash at fuse: SIGSEGV"), std::string::npos) << log.str();
  EXPECT_NE(xml.str().find("crash:fuse:SIGSEGV: crash at fuse: SIGSEGV"), std::string::npos)
      << xml.str();
  // The bundle is outside the repository: an absolute file URI, not a path under %SRCROOT%.
  EXPECT_EQ(log.str().find("\"uri\": \"/"), std::string::npos) << log.str();
  EXPECT_NE(log.str().find("\"uri\": \"file:///"), std::string::npos) << log.str();
}

}  // namespace

}  // namespace aotfuzz::cli::test

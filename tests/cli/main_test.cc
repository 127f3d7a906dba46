// Tests of the aotfuzz binary's command line (cli/main.cc and the cmd_*.cc it registers): bad
// values are refused before any work with one line and exit 2, --version and `help`, stdin for
// `-`, pure JSON from --json, help texts that agree with the docs. What a user's machine provokes
// (budgets, unwritable outputs) is in environment_faults_test.cc.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <wordexp.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"
#include "tests/support/files.h"

namespace aotfuzz::cli::test {
namespace {

namespace fs = std::filesystem;

const std::string kSeed = "corpus/seed/tvm_9036_annotated.relay";

// One bad command line and a word its error line must contain.
struct BadLine {
  std::vector<std::string> args;
  std::string mentions;
};

TEST(CommandLine, BadBudgetsCountsAndJobsAreRefusedWithOneLineAndExit2) {
  const std::vector<BadLine> lines = {
      {{"fuzz", "--time", "-5"}, "--time"},
      {{"fuzz", "--time", "0"}, "--time"},
      {{"fuzz", "--time", "nan"}, "--time"},
      {{"fuzz", "--cases", "0"}, "--cases"},
      {{"fuzz", "--cases", "-1"}, "--cases"},
      {{"fuzz", "--jobs", "0"}, "--jobs"},
      {{"fuzz", "--jobs", "-3"}, "--jobs"},
      {{"fuzz", "--reduce-time", "0"}, "--reduce-time"},
      {{"fuzz", "--reduce-time", "-1"}, "--reduce-time"},
      {{"gen", "--size", "-1"}, "--size"},
      {{"gen", "--count", "0"}, "--count"},
      {{"check", "--time", "0"}, "--time"},
      {{"check", "--jobs", "0"}, "--jobs"},
      {{"bench", "--cases", "0"}, "--cases"},
      {{"bench", "--jobs", "-3"}, "--jobs"},
      {{"bench", "--rounds", "0"}, "--rounds"},
      {{"reduce", kSeed, "--time", "0"}, "--time"},
      {{"reduce", kSeed, "--jobs", "0"}, "--jobs"},
      {{"replay", "corpus/seed", "--jobs", "0"}, "--jobs"},
      // A TVM home for a system that has none is a mistake on every command.
      {{"check", "--tvm-home", "/tmp", "--cases", "1"}, "--tvm-home"},
      {{"run", kSeed, "--tvm-home", "/tmp"}, "--tvm-home"},
      {{"bench", "--tvm-home", "/tmp", "--cases", "1"}, "--tvm-home"},
  };
  for (const auto& l : lines) expect_one_line_usage_error(l.args, l.mentions);
}

TEST(CommandLine, ModuleNamesThatCannotBeCIdentifiersAreRefusedUpFront) {
  const std::string long_name(65, 'x');
  const std::vector<BadLine> lines = {
      {{"run", kSeed, "--mod-name", "a b"}, "--mod-name"},
      {{"run", kSeed, "--mod-name", "a-b"}, "--mod-name"},
      {{"run", kSeed, "--mod-name", "9lives"}, "--mod-name"},
      {{"run", kSeed, "--mod-name", long_name}, "--mod-name"},
      {{"compile", kSeed, "--mod-name", "a'b"}, "--mod-name"},
      {{"fuzz", "--cases", "1", "--mod-name", "a b"}, "--mod-name"},
      {{"reduce", kSeed, "--mod-name", std::string(5000, 'x')}, "--mod-name"},
  };
  for (const auto& l : lines) expect_one_line_usage_error(l.args, l.mentions);
  // The longest accepted name and the empty one (TVM's bare "tvmgen" prefix) still run.
  for (const std::string& name : {std::string(64, 'm'), std::string()}) {
    const host::RunResult r = run_aotfuzz({"run", kSeed, "--mod-name", name}, 60);
    EXPECT_EQ(r.exit_code, 0) << name.size() << ": " << r.stdout_text << r.stderr_text;
  }
}

TEST(CommandLine, SeedsPastTwoToTheSixtyFourOrNegativeAreRefusedNotSaturated) {
  const std::vector<BadLine> lines = {
      {{"gen", "--seed", "18446744073709551616"}, "--seed"},
      {{"gen", "--seed", "-1"}, "--seed"},
      {{"fuzz", "--seed", "99999999999999999999999"}, "--seed"},
      {{"check", "--seed", "18446744073709551616"}, "--seed"},
      {{"bench", "--seed", "-1"}, "--seed"},
      {{"run", kSeed, "--input-seed", "18446744073709551616"}, "--input-seed"},
  };
  for (const auto& l : lines) expect_one_line_usage_error(l.args, l.mentions);
}

TEST(CommandLine, TheLargestSeedIsAcceptedAndSeedsAreReadInDecimal) {
  host::RunResult r = run_aotfuzz({"gen", "--seed", "18446744073709551615"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text.rfind("// aotfuzz gen --seed 18446744073709551615\n", 0), 0u);
  // strtoull in base 0 would read 010 as 8.
  r = run_aotfuzz({"gen", "--seed", "010"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text.rfind("// aotfuzz gen --seed 10\n", 0), 0u) << r.stdout_text;
}

TEST(CommandLine, BothHalvesOfAFlagPairTogetherAreRefusedByEveryCommandThatHasThem) {
  const std::vector<BadLine> lines = {
      {{"fuzz", "--merge", "--no-merge"}, "--no-merge"},
      {{"fuzz", "--no-swarm", "--swarm"}, "--swarm"},
      {{"fuzz", "--reduce", "--no-reduce"}, "--no-reduce"},
      {{"fuzz", "--storage-reuse", "--no-storage-reuse"}, "--no-storage-reuse"},
      {{"run", kSeed, "--merge", "--no-merge"}, "--no-merge"},
      {{"compile", kSeed, "--no-merge", "--merge"}, "--merge"},
      {{"reduce", kSeed, "--storage-reuse", "--no-storage-reuse"}, "--no-storage-reuse"},
      {{"show", kSeed, "--tvm-pytest", "--merge", "--no-merge"}, "--no-merge"},
      {{"show", kSeed, "--dot", "--tvm-pytest"}, "--tvm-pytest"},
      // --merge=false would be silently ignored by a flag that only sets true.
      {{"run", kSeed, "--merge=false"}, "merge"},
  };
  for (const auto& l : lines) expect_one_line_usage_error(l.args, l.mentions);
}

TEST(CommandLine, UnknownOptionsAndMissingArgumentsAreOneLineForEveryCommand) {
  const std::vector<BadLine> lines = {
      {{}, "subcommand"},
      {{"nosuch"}, "nosuch"},
      {{"gen", "--bogus"}, "--bogus"},
      {{"fmt"}, "FILE"},
      {{"compile", kSeed, "--emit", "nonsense"}, "--emit"},
      {{"run", kSeed, "--cc", "icc"}, "--cc"},
      {{"bugs", "extra"}, "extra"},
      {{"replay"}, "PATHS"},
      {{"check", "--bogus"}, "--bogus"},
      {{"show", kSeed, "--bogus"}, "--bogus"},
  };
  for (const auto& l : lines) expect_one_line_usage_error(l.args, l.mentions);
}

TEST(CommandLine, AGoodFlagPairHalfStillWorks) {
  const host::RunResult on = run_aotfuzz({"compile", kSeed, "--merge", "--emit", "merged"});
  const host::RunResult off = run_aotfuzz({"compile", kSeed, "--no-merge", "--emit", "merged"});
  EXPECT_EQ(on.exit_code, 0) << on.stderr_text;
  EXPECT_EQ(off.exit_code, 0) << off.stderr_text;
  // Merging changes the merged stage of the seed graph (that is TVM issue #9036's trigger).
  EXPECT_NE(on.stdout_text, off.stdout_text);
}

TEST(CommandLine, VersionPrintsTheProjectVersion) {
  const host::RunResult r = run_aotfuzz({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_EQ(r.stdout_text.rfind(std::string("aotfuzz ") + AOTFUZZ_VERSION + " (commit ", 0), 0u)
      << r.stdout_text;
}

TEST(CommandLine, HelpCommandPrintsWhatDashDashHelpPrints) {
  const host::RunResult help = run_aotfuzz({"help"});
  const host::RunResult dashes = run_aotfuzz({"--help"});
  EXPECT_EQ(help.exit_code, 0) << help.stderr_text;
  EXPECT_EQ(dashes.exit_code, 0);
  EXPECT_NE(help.stdout_text.find("fuzz"), std::string::npos) << help.stdout_text;
  EXPECT_EQ(help.stdout_text, dashes.stdout_text);

  const host::RunResult fuzz_help = run_aotfuzz({"help", "fuzz"});
  const host::RunResult fuzz_dashes = run_aotfuzz({"fuzz", "--help"});
  EXPECT_EQ(fuzz_help.exit_code, 0) << fuzz_help.stderr_text;
  EXPECT_NE(fuzz_help.stdout_text.find("--reduce-time"), std::string::npos);
  EXPECT_EQ(fuzz_help.stdout_text, fuzz_dashes.stdout_text);

  expect_one_line_usage_error({"help", "nosuch"}, "nosuch");
}

// The subcommands `aotfuzz --help` lists, and the long options `aotfuzz CMD --help` lists.
std::vector<std::string> subcommands() {
  const std::string help = run_aotfuzz({"--help"}).stdout_text;
  std::vector<std::string> out;
  const auto start = help.find("Subcommands:");
  std::istringstream in(help.substr(start == std::string::npos ? help.size() : start));
  std::string line;
  std::getline(in, line);
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, std::regex("^  ([a-z]+) "))) out.push_back(m[1]);
  }
  return out;
}

std::vector<std::string> long_options(const std::string& command) {
  std::istringstream in(run_aotfuzz({command, "--help"}).stdout_text);
  std::vector<std::string> out;
  std::string line;
  const std::regex option("^ +(-[a-zA-Z],)?(--[a-z][a-z0-9-]*)");
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, option) && m[2] != "--help") out.push_back(m[2]);
  }
  return out;
}

std::string documentation() {
  std::string text;
  std::vector<fs::path> files = {"README.md"};
  for (const auto& e : fs::directory_iterator(fs::path(AOTFUZZ_SOURCE_DIR) / "docs")) {
    files.push_back(e.path());
  }
  for (const auto& f : files) {
    std::ifstream in(fs::path(AOTFUZZ_SOURCE_DIR) / f);
    text += std::string(std::istreambuf_iterator<char>(in), {});
  }
  return text;
}

TEST(HelpAndDocs, EveryOptionOfEveryCommandIsDocumented) {
  const std::string docs = documentation();
  ASSERT_GT(docs.size(), 10000u) << "README.md and docs/ not found";
  const std::vector<std::string> commands = subcommands();
  ASSERT_GE(commands.size(), 10u);
  for (const auto& command : commands) {
    for (const auto& option : long_options(command)) {
      // A flag pair is documented by either half.
      const std::string other =
          option.rfind("--no-", 0) == 0 ? "--" + option.substr(5) : "--no-" + option.substr(2);
      const std::regex word(option + "(?![a-z0-9-])|" + other + "(?![a-z0-9-])");
      EXPECT_TRUE(std::regex_search(docs, word)) << "aotfuzz " << command << " " << option
                                                 << " is in --help but not in README.md or docs/";
    }
  }
}

TEST(HelpAndDocs, EveryOptionOfTheReadmeCommandLineExists) {
  std::ifstream in(fs::path(AOTFUZZ_SOURCE_DIR) / "README.md");
  const std::string readme(std::istreambuf_iterator<char>(in), {});
  const auto start = readme.find("## Command line");
  ASSERT_NE(start, std::string::npos);
  const auto block = readme.find("```", start);
  const auto end = readme.find("```", block + 3);
  const std::string usage = readme.substr(block, end - block);
  std::set<std::string> known;
  for (const auto& command : subcommands()) {
    for (const auto& option : long_options(command)) known.insert(option);
  }
  known.insert("--version");
  known.insert("--help");
  const std::regex flag("--[a-z][a-z0-9-]*");
  for (auto it = std::sregex_iterator(usage.begin(), usage.end(), flag);
       it != std::sregex_iterator(); ++it) {
    EXPECT_TRUE(known.count(it->str())) << it->str() << " in README.md's command line is no option";
  }
}

TEST(HelpAndDocs, CheckStatesItsOwnDefaultsAndTakesACaseBudget) {
  const std::string help = run_aotfuzz({"check", "--help"}).stdout_text;
  EXPECT_NE(help.find("default 9036"), std::string::npos) << help;
  EXPECT_EQ(help.find("from the clock"), std::string::npos) << help;
  EXPECT_NE(help.find("--cases"), std::string::npos) << help;
}

TEST(Check, ACaseBudgetSplitsTheFirstCasesAmongTheShardsWithoutATimeLimit) {
  host::TempDir dir("aotfuzz-cli-test");
  const host::RunResult r =
      run_aotfuzz({"check", "--corpus", "corpus/seed", "--cases", "5", "--shards", "2", "--jobs",
                   "1", "--findings", dir.file("findings").string()});
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  // Shard 0/2 takes cases 0, 2, 4 and shard 1/2 cases 1, 3.
  EXPECT_NE(r.stdout_text.find("shard 0/2: 3 cases"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("shard 1/2: 2 cases"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("aotfuzz check: passed"), std::string::npos) << r.stdout_text;
}

TEST(CommandLine, ShowDotRefusesPipelineFlagsItWouldIgnore) {
  expect_one_line_usage_error({"show", kSeed, "--dot", "--merge"}, "--merge");
  expect_one_line_usage_error({"show", kSeed, "--dot", "--inject", "tuple-arg-first-field"},
                              "--inject");
  EXPECT_EQ(run_aotfuzz({"show", kSeed, "--dot"}).exit_code, 0);
}

TEST(CommandLine, RunKeepKeepsTheCOfAVerdictSettledBeforeCompiling) {
  const host::RunResult r =
      run_aotfuzz({"run", kSeed, "--inject", "tuple-arg-first-field", "--keep"});
  EXPECT_EQ(r.exit_code, 1) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("arity:codegen:kernel"), std::string::npos) << r.stdout_text;
  const auto at = r.stderr_text.find("kept ");
  ASSERT_NE(at, std::string::npos) << r.stderr_text;
  const std::string line = r.stderr_text.substr(at + 5, r.stderr_text.find('\n', at) - at - 5);
  const fs::path kept = line.substr(0, line.find(" ("));
  EXPECT_TRUE(fs::exists(kept / "main.c")) << kept;
  // Kept in memory is said, with what to do about it.
  EXPECT_EQ(kept.string().rfind("/dev/shm/", 0) == 0, line.find("in memory") != std::string::npos)
      << line;
  fs::remove_all(kept);
}

TEST(CommandLine, RunJsonPrintsOneJsonObjectWithTheReplayCommandInside) {
  const host::RunResult r =
      run_aotfuzz({"run", kSeed, "--inject", "tuple-arg-first-field", "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  nlohmann::json j;
  // parse() refuses anything after the object, such as a `replay:` line.
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.stdout_text)) << r.stdout_text;
  EXPECT_EQ(j.value("kind", ""), "arity");
  const std::string replay = j.value("replay", "");
  EXPECT_EQ(replay.rfind("aotfuzz run " + kSeed + " ", 0), 0u) << replay;
  EXPECT_NE(replay.find("--inject tuple-arg-first-field"), std::string::npos) << replay;
}

TEST(CommandLine, AReplayLineSplitAsAShellWouldNamesAPathWithSpacesAndQuotes) {
  host::TempDir dir("aotfuzz-cli-test");
  fs::create_directories(dir.path() / "a b'c");
  const fs::path file = dir.path() / "a b'c" / "-seed.relay";
  fs::copy_file(fs::path(AOTFUZZ_SOURCE_DIR) / kSeed, file);
  const host::RunResult r =
      run_aotfuzz({"run", file.string(), "--inject", "tuple-arg-first-field", "--json"});
  ASSERT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  const std::string replay = nlohmann::json::parse(r.stdout_text).value("replay", "");
  // WRDE_NOCMD: a command substitution in the line is an error, not run.
  wordexp_t words;
  ASSERT_EQ(wordexp(replay.c_str(), &words, WRDE_NOCMD | WRDE_UNDEF), 0) << replay;
  std::vector<std::string> argv(words.we_wordv, words.we_wordv + words.we_wordc);
  wordfree(&words);
  ASSERT_GE(argv.size(), 3u) << replay;
  EXPECT_EQ(argv[1], "run");
  EXPECT_EQ(fs::path(argv[2]), file) << replay;
  // The replayed argument vector gives the finding again.
  argv.erase(argv.begin());
  EXPECT_EQ(run_aotfuzz(argv).exit_code, 1) << replay;
}

TEST(CommandLine, RunJsonOfAnUnreadableFileIsAnInvalidInputObject) {
  const host::RunResult r = run_aotfuzz({"run", "corpus", "--json"});
  EXPECT_EQ(r.exit_code, 2);
  nlohmann::json j;
  ASSERT_NO_THROW(j = nlohmann::json::parse(r.stdout_text)) << r.stdout_text;
  EXPECT_EQ(j.value("kind", ""), "invalid-input");
  EXPECT_EQ(line_count(r.stderr_text), 1) << r.stderr_text;
}

TEST(CommandLine, FmtDashReadsTheModuleFromStandardInput) {
  const Spawned piped =
      spawn_aotfuzz({"fmt", "-"}, std::string(AOTFUZZ_SOURCE_DIR) + "/" + kSeed, false);
  const host::RunResult named = run_aotfuzz({"fmt", kSeed});
  ASSERT_EQ(named.exit_code, 0) << named.stderr_text;
  EXPECT_TRUE(WIFEXITED(piped.status) && WEXITSTATUS(piped.status) == 0) << piped.err;
  EXPECT_NE(piped.out.find("@main"), std::string::npos);
  EXPECT_EQ(piped.out, named.stdout_text);
}

TEST(CommandLine, FmtDashNamesStandardInputInParseErrors) {
  host::TempDir dir("aotfuzz-cli-test");
  const fs::path bad = dir.file("bad.relay");
  std::ofstream(bad) << "def @main(%x: Tensor[(2), float32]) { %y }\n";
  const Spawned r = spawn_aotfuzz({"fmt", "-"}, bad.string(), false);
  EXPECT_TRUE(WIFEXITED(r.status) && WEXITSTATUS(r.status) == 2) << r.err;
  EXPECT_EQ(r.err.rfind("<stdin>", 0), 0u) << r.err;
}

TEST(CommandLine, AGateWithNothingToCheckIsBadInput) {
  host::TempDir dir("aotfuzz-cli-test");
  fs::create_directories(dir.file("empty"));
  std::ofstream(dir.file("empty") / "notes.txt") << "not a graph\n";
  const std::string empty = dir.file("empty").string();
  expect_one_line_usage_error({"replay", empty}, "no .relay files");
  expect_one_line_usage_error({"check", "--corpus", empty, "--cases", "1"}, "no .relay files");
}

TEST(CommandLine, AMalformedReplayHeaderIsBadInputNamingTheFileOnce) {
  host::TempDir dir("aotfuzz-cli-test");
  const fs::path bad = dir.file("bad.relay");
  std::ofstream(bad) << "// replay: --merge pass\n"
                     << "def @main(%x: Tensor[(2), float32]) { add(%x, %x) }\n";
  expect_one_line_usage_error({"replay", bad.string()}, bad.string() + ":1:");
  const host::RunResult r = run_aotfuzz({"replay", bad.string()});
  const std::string& err = r.stderr_text;
  EXPECT_EQ(err.find(bad.string()), err.rfind(bad.string())) << err;
}

TEST(CommandLine, RunWithoutFlagsUsesTheFilesFirstFindingLine) {
  const std::string file = "corpus/regressions/tuple-arg-first-field.relay";
  const host::RunResult r = run_aotfuzz({"run", file});
  EXPECT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("signature: arity:codegen:kernel"), std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("using the flags of " + file + ":"), std::string::npos)
      << r.stderr_text;
  // A flag on the command line replaces the header's.
  EXPECT_EQ(run_aotfuzz({"run", file, "--merge"}).exit_code, 0);
}

TEST(CommandLine, CompileWritesAModuleStageIntoTheOutDirectory) {
  host::TempDir dir("aotfuzz-cli-test");
  const host::RunResult r =
      run_aotfuzz({"compile", kSeed, "--emit", "fused", "--out", dir.file("out").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "");
  const std::string written = test_support::read_text((dir.file("out") / "fused.relay").string());
  EXPECT_EQ(written, run_aotfuzz({"compile", kSeed, "--emit", "fused"}).stdout_text);
}

TEST(CommandLine, FindingsAndReportRefuseADirectoryNoCampaignWrote) {
  host::TempDir dir("aotfuzz-cli-test");
  std::ofstream(dir.file("notes.txt")) << "nothing here\n";
  expect_one_line_usage_error({"findings", dir.path().string()}, "not a findings directory");
  expect_one_line_usage_error({"report", dir.path().string()}, "not a findings directory");
}

TEST(CommandLine, VersionNamesTheCommitAndTheBuild) {
  const host::RunResult r = run_aotfuzz({"--version"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.stdout_text.find("(commit "), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find(" build)"), std::string::npos) << r.stdout_text;
}

TEST(CommandLine, VersionNamesTheCommitTheBinaryWasBuiltFromAndSaysDirty) {
  // The tree as it is now, which the build read at build time (not at configure time).
  const auto git = [](std::vector<std::string> args) {
    args.insert(args.begin(), {"/usr/bin/git", "-C", AOTFUZZ_SOURCE_DIR});
    return host::run_process(args, {});
  };
  const host::RunResult head = git({"rev-parse", "--short=12", "HEAD"});
  std::string commit = "unknown";  // outside a git clone
  if (head.exit_code == 0) {
    commit = head.stdout_text.substr(0, head.stdout_text.find('\n'));
    const host::RunResult status = git({"status", "--porcelain", "--untracked-files=no"});
    if (!status.stdout_text.empty()) commit += "-dirty";
  }
  const host::RunResult r = run_aotfuzz({"--version"});
  EXPECT_NE(r.stdout_text.find("(commit " + commit + ","), std::string::npos)
      << r.stdout_text << " (expected " << commit << ")";
}

TEST(CommandLine, HelpListsTheExitCodes) {
  const std::string help = run_aotfuzz({"--help"}).stdout_text;
  for (const char* code : {"0 ", "1 ", "2 ", "3 ", "130 "}) {
    EXPECT_NE(help.find(std::string("  ") + code), std::string::npos) << code << "\n" << help;
  }
  EXPECT_NE(help.find("Exit codes"), std::string::npos) << help;
}

TEST(CommandLine, ASizeTooLargeNamesTheFlagAndItsLargestValueNotAKnob) {
  expect_one_line_usage_error({"gen", "--size", "2000000000"},
                              "--size 2000000000 is too large: at most");
  const host::RunResult r = run_aotfuzz({"gen", "--size", "2000000000"});
  EXPECT_EQ(r.stderr_text.find("max_ops"), std::string::npos) << r.stderr_text;
}

TEST(CommandLine, RunOfAGraphThatDoesNotParsePrintsItsSignatureLine) {
  host::TempDir dir("aotfuzz-cli-test");
  const std::string bad = dir.file("bad.relay").string();
  std::ofstream(bad) << "def @main(%x: Tensor[(2), float32]) {\n  add(%x, \n}\n";
  const host::RunResult r = run_aotfuzz({"run", bad});
  EXPECT_EQ(r.exit_code, 2) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("signature: invalid-input:annotated"), std::string::npos)
      << r.stdout_text;
}

TEST(CommandLine, BugDescriptionsCloseEveryParenthesisTheyOpen) {
  const auto json = nlohmann::json::parse(run_aotfuzz({"bugs", "--json"}).stdout_text);
  for (const auto& row : json) {
    int depth = 0;
    const std::string text = row.at("description");
    for (char c : text) {
      depth += c == '(' ? 1 : c == ')' ? -1 : 0;
      EXPECT_GE(depth, 0) << row.at("name") << ": " << text;
    }
    EXPECT_EQ(depth, 0) << row.at("name") << ": " << text;
  }
}

TEST(CommandLine, BugsAlignsItsColumnsAndHasAJsonForm) {
  const host::RunResult table = run_aotfuzz({"bugs"});
  ASSERT_EQ(table.exit_code, 0);
  std::istringstream lines(table.stdout_text);
  std::string line;
  std::size_t stage_col = std::string::npos;
  while (std::getline(lines, line)) {
    const std::size_t name_end = line.find(' ');
    const std::size_t col = line.find_first_not_of(' ', name_end);
    if (stage_col == std::string::npos) stage_col = col;
    EXPECT_EQ(col, stage_col) << line;
  }
  const auto json = nlohmann::json::parse(run_aotfuzz({"bugs", "--json"}).stdout_text);
  ASSERT_GE(json.size(), 27u);
  EXPECT_EQ(json[0].at("name"), "tuple-arg-first-field");
}

TEST(CommandLine, GenListsKnobDefaultsAndWritesCountFiles) {
  const std::string knobs = run_aotfuzz({"gen", "--list-knobs"}).stdout_text;
  EXPECT_NE(knobs.find("default"), std::string::npos) << knobs;
  EXPECT_NE(knobs.find("max_ops"), std::string::npos) << knobs;
  EXPECT_NE(knobs.find(" 12 "), std::string::npos) << knobs;
  // The knobs of a campaign's draws per case are there too.
  EXPECT_NE(knobs.find("p_merge"), std::string::npos) << knobs;
  EXPECT_NE(knobs.find("p_warnings"), std::string::npos) << knobs;
  host::TempDir dir("aotfuzz-cli-test");
  const host::RunResult r =
      run_aotfuzz({"gen", "--seed", "5", "--count", "3", "--out-dir", dir.file("graphs").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  for (int seed : {5, 6, 7}) {
    const fs::path f = dir.file("graphs") / ("gen-" + std::to_string(seed) + ".relay");
    EXPECT_TRUE(fs::exists(f)) << f;
    EXPECT_EQ(run_aotfuzz({"fmt", f.string()}).exit_code, 0) << f;
  }
}

TEST(CommandLine, ErrorsNameTheirCommandOneWayAndARepeatedOptionTakesTheLast) {
  const host::RunResult twice =
      run_aotfuzz({"run", kSeed, "--api", "unpacked", "--api", "packed", "--no-run"});
  EXPECT_EQ(twice.exit_code, 0) << twice.stderr_text;
  expect_one_line_usage_error({"replay", "no/such/dir"}, "aotfuzz replay: no/such/dir");
  expect_one_line_usage_error({"check", "--corpus", "no/such/dir"}, "aotfuzz check: ");
}

TEST(CommandLine, TheCampaignHeaderNamesTheCompilerItResolved) {
  host::TempDir dir("aotfuzz-cli-test");
  const host::RunResult r = run_aotfuzz(
      {"fuzz", "--cases", "2", "--seed", "1", "--no-reduce", "--findings", dir.file("f").string()});
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("compiler default"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("(the default here)"), std::string::npos) << r.stdout_text;
  const host::RunResult gcc = run_aotfuzz({"fuzz", "--cases", "2", "--seed", "1", "--no-reduce",
                                           "--cc", "gcc", "--findings", dir.file("g").string()});
  EXPECT_NE(gcc.stdout_text.find("compiler gcc,"), std::string::npos) << gcc.stdout_text;
}

TEST(HelpAndDocs, FuzzAndBenchSayWhichOptionsTheyDrawAndWhereFindingsGo) {
  for (const char* command : {"fuzz", "bench"}) {
    const std::string help = run_aotfuzz({command, "--help"}).stdout_text;
    for (const char* drawn : {"Run MergeCompilerRegions", "Reuse dead intermediates",
                              "Generate the C twice", "Check a program compiled by tcc"}) {
      const std::size_t at = help.find(drawn);
      ASSERT_NE(at, std::string::npos) << command << ": " << drawn << "\n" << help;
      const std::string line = help.substr(at, help.find('\n', at) - at);
      EXPECT_EQ(line.find("(default: on)"), std::string::npos) << command << ": " << line;
      EXPECT_NE(line.find("drawn per case"), std::string::npos) << command << ": " << line;
      // ... and the knob that draws it.
      EXPECT_NE(line.find("--knob p_"), std::string::npos) << command << ": " << line;
    }
  }
  EXPECT_NE(run_aotfuzz({"fuzz", "--help"}).stdout_text.find("default: ./findings"),
            std::string::npos);
  // A fixed build decides whether reduced findings pass there: bench reduces nothing.
  EXPECT_EQ(run_aotfuzz({"bench", "--help"}).stdout_text.find("--tvm-fixed-home"),
            std::string::npos);
}

TEST(CommandLine, FmtOfADirectorySaysItIsADirectory) {
  expect_one_line_usage_error({"fmt", "corpus"}, "corpus: is a directory");
  const host::RunResult r = run_aotfuzz({"fmt", "corpus"});
  EXPECT_EQ(r.stderr_text.find("@main"), std::string::npos) << r.stderr_text;
}

}  // namespace
}  // namespace aotfuzz::cli::test

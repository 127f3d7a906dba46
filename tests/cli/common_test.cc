// Unit tests for the flag plumbing of cli/common.cc: the policy flags shared by `aotfuzz gen` and
// `aotfuzz fuzz` (--knob and --size registration, parsing into a validated policy, printing back
// as replayable flags), flag pairs, number validators, output path checks, reading files.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "cli/cmd_fuzz.h"
#include "cli/common.h"
#include "generator/policy.h"
#include "host/tempdir.h"

namespace aotfuzz::cli {
namespace {

// The CommandError `fn` throws (its code is -1 when it throws none).
template <class Fn>
CommandError error_of(Fn fn) {
  try {
    fn();
  } catch (const CommandError& e) {
    return e;
  }
  return CommandError(-1, "");
}

TEST(PolicyFlags, KnobsApplyInOrderAndSizeFixesTheSteps) {
  const generator::GenPolicy p = policy_from_flags(
      {"p_host_op=0.5", "targets=ccompiler:1,other:1", "p_host_op=0.25"}, 7, "gen");
  EXPECT_DOUBLE_EQ(p.p_host_op, 0.25);
  ASSERT_EQ(p.targets.size(), 2u);
  EXPECT_EQ(p.targets[1].name, "other");
  EXPECT_EQ(p.min_ops, 7);
  EXPECT_EQ(p.max_ops, 7);
  // Size 0 keeps the policy's range.
  EXPECT_EQ(policy_from_flags({}, 0, "gen").max_ops, generator::GenPolicy{}.max_ops);
}

TEST(PolicyFlags, KnobFlagsListOnlyTheChangedKnobsAndReplayToTheSamePolicy) {
  EXPECT_EQ(knob_flags(generator::GenPolicy{}), "");
  const generator::GenPolicy p =
      policy_from_flags({"p_host_op=0.5", "max_ops=16", "targets=ccompiler:1,other:1"}, 0, "fuzz");
  const std::string flags = knob_flags(p);
  // Table order, one leading space per flag.
  EXPECT_EQ(flags, " --knob max_ops=16 --knob targets=ccompiler:1,other:1 --knob p_host_op=0.5");
  std::vector<std::string> again;
  for (std::size_t pos = 0; (pos = flags.find("--knob ", pos)) != std::string::npos;) {
    pos += 7;
    again.push_back(flags.substr(pos, flags.find(' ', pos) - pos));
  }
  EXPECT_EQ(generator::describe(policy_from_flags(again, 0, "gen")), generator::describe(p));
}

TEST(PolicyFlags, BadFlagsAreBadInputErrorsNamingTheCommandAndTheProblem) {
  const CommandError no_eq = error_of([] { policy_from_flags({"p_host_op"}, 0, "gen"); });
  EXPECT_EQ(no_eq.code(), kBadInput);
  EXPECT_EQ(std::string(no_eq.what()), "gen: --knob expects NAME=VALUE, got 'p_host_op'");
  const CommandError unknown = error_of([] { policy_from_flags({"nope=1"}, 0, "fuzz"); });
  EXPECT_EQ(unknown.code(), kBadInput);
  EXPECT_NE(std::string(unknown.what()).find("fuzz: unknown generator knob 'nope'"),
            std::string::npos);
  const CommandError range = error_of([] { policy_from_flags({"p_tuple=2"}, 0, "check"); });
  EXPECT_EQ(range.code(), kBadInput);
  EXPECT_EQ(std::string(range.what()).rfind("check: knob p_tuple", 0), 0u) << range.what();
  const CommandError inverted = error_of([] {
    policy_from_flags({"min_ops=9", "max_ops=3"}, 0, "gen");
  });
  EXPECT_EQ(inverted.code(), kBadInput);
}

TEST(PolicyFlags, AddPolicyFlagsRegistersRepeatableKnobAndSize) {
  CLI::App app;
  std::vector<std::string> knobs;
  int size = 0;
  add_policy_flags(&app, knobs, size);
  app.parse("--knob p_tuple=0 --knob max_ops=4 --size 3", /*program_name_included=*/false);
  EXPECT_EQ(knobs, (std::vector<std::string>{"p_tuple=0", "max_ops=4"}));
  EXPECT_EQ(size, 3);
}

TEST(FlagPair, EachHalfSetsTheValueAndTogetherTheyAreAnError) {
  for (const auto& [line, want] : {std::pair{"--merge", true}, std::pair{"--no-merge", false}}) {
    CLI::App app;
    bool merge = !want;
    add_flag_pair(&app, "merge", merge, "Merge");
    app.parse(line, /*program_name_included=*/false);
    EXPECT_EQ(merge, want) << line;
  }
  CLI::App app;
  bool merge = true;
  add_flag_pair(&app, "merge", merge, "Merge");
  EXPECT_THROW(app.parse("--merge --no-merge", false), CLI::ExcludesError);
}

TEST(NumberValidators, UnsignedDecimalTakesTheWholeRangeInDecimalAndNothingElse) {
  CLI::App app;
  std::uint64_t seed = 0;
  app.add_option("--seed", seed)->transform(unsigned_decimal(1));
  app.parse("--seed 18446744073709551615", false);
  EXPECT_EQ(seed, 18446744073709551615ULL);
  app.parse("--seed 010", false);
  EXPECT_EQ(seed, 10u);
  for (const char* bad : {"0", "-1", "18446744073709551616", "0x10", "+5", "1.0"}) {
    EXPECT_THROW(app.parse(std::string("--seed=") + bad, false), CLI::ValidationError) << bad;
  }
}

TEST(NumberValidators, PositiveSecondsRefuseZeroNegativeAndNonFiniteValues) {
  CLI::App app;
  double time = 0;
  app.add_option("--time", time)->check(positive_seconds());
  app.parse("--time 0.5", false);
  EXPECT_DOUBLE_EQ(time, 0.5);
  for (const char* bad : {"0", "-5", "nan", "inf", "1e10", "5s"}) {
    EXPECT_THROW(app.parse(std::string("--time=") + bad, false), CLI::ValidationError) << bad;
  }
}

TEST(OutputChecks, WritablePathsPassAndLeaveTheFileSystemAsItWas) {
  namespace fs = std::filesystem;
  host::TempDir dir("aotfuzz-cli-test");
  const fs::path file = dir.file("stats.json");
  check_output_file(file.string(), "--stats", "fuzz");
  EXPECT_FALSE(fs::exists(file));
  std::ofstream(file) << "kept";
  check_output_file(file.string(), "--stats", "fuzz");
  std::ifstream in(file);
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), "kept");
  const fs::path findings = dir.file("a") / "b" / "findings";
  check_output_dir(findings.string(), "--findings", "fuzz");
  EXPECT_FALSE(fs::exists(dir.file("a")));
  // No probe file left anywhere: only the stats file remains.
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);
}

TEST(OutputChecks, UnwritablePathsAreBadInputNamingTheFlagAndTheReason) {
  host::TempDir dir("aotfuzz-cli-test");
  std::ofstream(dir.file("plain")) << "x";
  const std::string under_file = (dir.file("plain") / "out").string();
  const CommandError file_error =
      error_of([&] { check_output_file(under_file, "--stats", "fuzz"); });
  EXPECT_EQ(file_error.code(), kBadInput);
  EXPECT_EQ(std::string(file_error.what()),
            "fuzz: cannot write --stats " + under_file + ": Not a directory");
  const CommandError dir_error =
      error_of([&] { check_output_dir(under_file, "--findings", "check"); });
  EXPECT_EQ(dir_error.code(), kBadInput);
  EXPECT_EQ(std::string(dir_error.what()).rfind("check: cannot write --findings " + under_file, 0),
            0u)
      << dir_error.what();
  const CommandError is_dir =
      error_of([&] { check_output_file(dir.path().string(), "--junit", "replay"); });
  EXPECT_EQ(std::string(is_dir.what()),
            "replay: cannot write --junit " + dir.path().string() + ": is a directory");
}

TEST(ReadFile, ADirectoryIsBadInputSayingSo) {
  host::TempDir dir("aotfuzz-cli-test");
  const CommandError e = error_of([&] { read_file(dir.path().string()); });
  EXPECT_EQ(e.code(), kBadInput);
  EXPECT_EQ(std::string(e.what()), dir.path().string() + ": is a directory, not a Relay file");
}

TEST(CampaignOptions, ARelativeFindingsDirectoryBecomesAbsolute) {
  CLI::App app;
  FuzzFlags f;
  add_fuzz_flags(&app, f, /*full=*/true);
  // CLI11 takes a vector of arguments last first.
  app.parse(std::vector<std::string>{"gcc", "--cc", "1", "--cases", "some/where", "--findings"});
  const fuzz::CampaignOptions o = campaign_options(&app, f, /*seed_given=*/false);
  EXPECT_TRUE(o.findings_dir.is_absolute()) << o.findings_dir;
  EXPECT_EQ(o.findings_dir, std::filesystem::current_path() / "some" / "where");
}

TEST(Flags, EachCommandTakesTheCaseFlagsItsColumnNames) {
  for (const unsigned command : {oracle::kCompile, oracle::kShow, oracle::kRun, oracle::kFuzz,
                                 oracle::kReduce, oracle::kCheck, oracle::kBench}) {
    CLI::App app;
    PipelineFlags f;
    add_pipeline_flags(&app, f, command);
    for (const auto& row : oracle::case_flag_table()) {
      const bool takes = (row.commands & command) != 0;
      const std::string name(row.name);
      EXPECT_EQ(app.get_option_no_throw("--" + name) != nullptr, takes) << name << " " << command;
      if (row.kind == oracle::CaseFlagKind::kPair) {
        EXPECT_EQ(app.get_option_no_throw("--no-" + name) != nullptr, takes) << name;
      }
    }
  }
}

TEST(Flags, TheCommandLineReadsAReplayLineAsTheReplayParserDoes) {
  const std::string line =
      "--no-merge --mod-name m --api unpacked --interface c --no-storage-reuse "
      "--max-fuse-depth 3 --cc gcc --check-num-args --input-seed 7 --ulp 2 --memory-budget 9 "
      "--inject swapped-output-order --inject tuple-arg-first-field --no-run --no-structure "
      "--no-determinism --no-warnings --in-process-time 2.5 --debug-fault fuse:throw";
  CLI::App app;
  PipelineFlags f;
  add_pipeline_flags(&app, f, oracle::kRun);
  auto words = oracle::split_flags(line);
  app.parse(std::vector<std::string>(words.rbegin(), words.rend()));
  const std::string expected = oracle::replay_flags(oracle::parse_case_flags(line));
  EXPECT_EQ(oracle::replay_flags(case_options(f)), expected);
  EXPECT_EQ(oracle::replay_flags(oracle::parse_case_flags(expected)), expected);
}

TEST(Flags, TheCommandLineRefusesWhatTheReplayParserRefuses) {
  for (const std::string line : {"--mod-name 'a b'", "--max-fuse-depth 0", "--ulp 4294967296",
                                 "--in-process-time 0", "--debug-fault fuse:explode"}) {
    EXPECT_THROW(oracle::parse_case_flags(line), oracle::FlagError) << line;
    CLI::App app;
    PipelineFlags f;
    add_pipeline_flags(&app, f, oracle::kRun);
    auto words = oracle::split_flags(line);
    EXPECT_THROW(app.parse(std::vector<std::string>(words.rbegin(), words.rend())),
                 CLI::ValidationError)
        << line;
  }
  // Rules across flags hold when the options are made.
  for (const std::string line : {"--interface c", "--sanitize --cc tcc", "--tvm-home /x"}) {
    EXPECT_THROW(oracle::parse_case_flags(line), oracle::FlagError) << line;
    CLI::App app;
    PipelineFlags f;
    add_pipeline_flags(&app, f, oracle::kRun);
    auto words = oracle::split_flags(line);
    app.parse(std::vector<std::string>(words.rbegin(), words.rend()));
    EXPECT_THROW(case_options(f), CommandError) << line;
  }
}

TEST(Flags, SettingsGivenAreTheFlagsThatAdjustAReplayLine) {
  CLI::App app;
  PipelineFlags f;
  add_pipeline_flags(&app, f, oracle::kRun);
  const std::vector<std::string> words = {"--no-merge", "--sut", "builtin", "--no-run",
                                          "--api", "unpacked", "--in-process-time", "3"};
  app.parse(std::vector<std::string>(words.rbegin(), words.rend()));
  // In the order CLI11 runs the options' callbacks; each flag keeps its value.
  const std::string settings = setting_flags(f);
  for (const std::string part : {" --sut builtin", " --no-run", " --in-process-time 3"}) {
    EXPECT_NE(settings.find(part), std::string::npos) << settings;
  }
  EXPECT_EQ(settings.size(), std::string(" --sut builtin --no-run --in-process-time 3").size());
}

TEST(Flags, AnyPipelineFlagSeesEachFlagThatSetsCaseOptions) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{{"--no-merge"}, {"--api", "unpacked"},
                                             {"--inject", "tuple-arg-first-field"},
                                             {"--no-warnings"}}) {
    CLI::App app;
    PipelineFlags f;
    add_pipeline_flags(&app, f, oracle::kRun);
    std::vector<std::string> reversed(args.rbegin(), args.rend());
    app.parse(reversed);
    EXPECT_TRUE(any_pipeline_flag(&app)) << args[0];
  }
  CLI::App app;
  PipelineFlags f;
  add_pipeline_flags(&app, f, oracle::kRun);
  app.parse(std::vector<std::string>{});
  EXPECT_FALSE(any_pipeline_flag(&app));
}

TEST(CampaignOptions, ACaseFlagGivenFixesItsKnobOverTheKnobsGiven) {
  auto options_of = [](std::vector<std::string> args) {
    CLI::App app;
    FuzzFlags f;
    add_fuzz_flags(&app, f, /*full=*/true);
    args.insert(args.begin(), {"--cases", "1"});
    app.parse(std::vector<std::string>(args.rbegin(), args.rend()));
    return campaign_options(&app, f, /*seed_given=*/false);
  };
  const generator::GenPolicy defaults;
  const auto merge = options_of({"--no-merge", "--knob", "p_merge=0.9", "--warnings"}).policy;
  EXPECT_EQ(merge.p_merge, 0);
  EXPECT_EQ(merge.p_warnings, 1);
  EXPECT_EQ(merge.p_unpacked, defaults.p_unpacked);
  // --interface c needs the unpacked API, which it fixes too.
  const auto c = options_of({"--interface", "c"}).policy;
  EXPECT_EQ(c.p_c_interface, 1);
  EXPECT_EQ(c.p_unpacked, 1);
  const auto packed = options_of({"--api", "packed", "--interface", "packed"}).policy;
  EXPECT_EQ(packed.p_unpacked, 0);
  EXPECT_EQ(packed.p_c_interface, 0);
  // A depth given is no small depth drawn: every case keeps it.
  const auto depth = options_of({"--max-fuse-depth", "9"});
  EXPECT_EQ(depth.policy.p_small_fuse_depth, 0);
  EXPECT_EQ(depth.base.aot.max_fuse_depth, 9);
  // Knobs alone are taken as given.
  const auto knobs = options_of({"--knob", "p_merge=0.25", "--knob", "max_small_fuse_depth=8"});
  EXPECT_EQ(knobs.policy.p_merge, 0.25);
  EXPECT_EQ(knobs.policy.max_small_fuse_depth, 8);
}

TEST(CampaignOptions, ATvmCampaignDrawsInsideTvmsKnownLimitsUnlessAKnobSaysOtherwise) {
  auto policy_of = [](std::vector<std::string> reversed_args) {
    CLI::App app;
    FuzzFlags f;
    add_fuzz_flags(&app, f, /*full=*/true);
    app.parse(reversed_args);
    return campaign_options(&app, f, /*seed_given=*/false).policy;
  };
  const generator::GenPolicy defaults;
  const std::string home = std::string(AOTFUZZ_SOURCE_DIR) + "/tests/tvm/fake_tvm";
  const auto tvm = policy_of({home, "--tvm-home", "--no-run", "tvm", "--sut", "1", "--cases"});
  EXPECT_EQ(generator::get_knob(tvm, "min_rank"), "2");
  EXPECT_EQ(generator::get_knob(tvm, "max_rank"), "2");
  EXPECT_EQ(generator::get_knob(tvm, "dtypes"), "float32:8,int32:1");
  EXPECT_LT(tvm.p_broadcast, defaults.p_broadcast);
  EXPECT_LT(tvm.p_constant, defaults.p_constant);
  EXPECT_LT(tvm.p_unpacked, defaults.p_unpacked);
  // A knob on the command line reaches past the limit.
  const auto asked = policy_of(
      {home, "--tvm-home", "--no-run", "max_rank=3", "--knob", "tvm", "--sut", "1", "--cases"});
  EXPECT_EQ(generator::get_knob(asked, "max_rank"), "3");
  EXPECT_EQ(generator::get_knob(asked, "min_rank"), "2");
  const auto halves = policy_of(
      {home, "--tvm-home", "--no-run", "p_unpacked=0.5", "--knob", "tvm", "--sut", "1", "--cases"});
  EXPECT_EQ(halves.p_unpacked, 0.5);
  // The origin line's knobs are the graph's: the system's share of unpacked cases is not one.
  EXPECT_EQ(knob_flags(tvm).find("p_unpacked"), std::string::npos) << knob_flags(tvm);
  EXPECT_NE(knob_flags(tvm).find("max_rank=2"), std::string::npos) << knob_flags(tvm);
  // The builtin pipeline keeps the defaults.
  const auto builtin = policy_of({"1", "--cases"});
  EXPECT_EQ(generator::get_knob(builtin, "min_rank"), generator::get_knob(defaults, "min_rank"));
}

}  // namespace
}  // namespace aotfuzz::cli

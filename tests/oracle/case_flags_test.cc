// The flags of replay lines (oracle/case_flags.h): shell words, the same flags and defaults as
// `aotfuzz run`, and replay_flags parsed back to the same options.
#include "oracle/case_flags.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <stdexcept>

#include "aot/bugs.h"
#include "host/shell_words.h"
#include "oracle/oracle.h"
#include "oracle/sut.h"

namespace aotfuzz::oracle {
namespace {

using host::shell_quote;

TEST(CaseFlags, QuotedWordsSplitAsAPosixShellSplitsThem) {
  EXPECT_EQ(split_flags("--mod-name '' --tvm-home '/a b/c'  x\\ y \"q\\\"r\""),
            (std::vector<std::string>{"--mod-name", "", "--tvm-home", "/a b/c", "x y", "q\"r"}));
  EXPECT_THROW(split_flags("--mod-name 'open"), FlagError);
  EXPECT_THROW(split_flags("--mod-name \"open"), FlagError);
}

TEST(CaseFlags, ModuleNamesAreCIdentifierFragmentsOnEveryPath) {
  for (const std::string& name :
       std::vector<std::string>{"", "my_mod", "_x1", std::string(64, 'm')}) {
    const auto options = parse_case_flags("--merge --mod-name " + shell_quote(name));
    EXPECT_EQ(options.aot.mod_name, name);
    EXPECT_EQ(parse_case_flags(replay_flags(options)).aot.mod_name, name);
  }
  // The name becomes part of C identifiers and file names.
  for (const std::string& name :
       std::vector<std::string>{"a b", "it's", "$(x)", "1abc", std::string(65, 'm')}) {
    EXPECT_THROW(parse_case_flags("--mod-name " + shell_quote(name)), FlagError) << name;
  }
}

// A system other than the builtin pipeline, as a replay line names it; it builds nothing.
class NamedSystem : public SystemUnderTest {
 public:
  explicit NamedSystem(SutSpec spec) : spec_(std::move(spec)) {}
  const SutSpec& spec() const override { return spec_; }
  std::optional<PreparedCase> prepare(const ir::Module&, const CaseOptions&, CaseResult&,
                                      const CaseReference*, const StageMark*) const override {
    return std::nullopt;
  }
  bool prepares_in_process() const override { return false; }
  bool batches_programs() const override { return false; }
  std::optional<CaseOptions> fixed_case(const CaseOptions&) const override { return std::nullopt; }
  std::shared_ptr<const SystemUnderTest> for_worker() const override {
    return std::make_shared<NamedSystem>(spec_);
  }
  // Built from a home, as TVM is: its replay lines name the home.
  std::string_view home_flag() const override { return "tvm-home"; }

 private:
  SutSpec spec_;
};

std::shared_ptr<const SystemUnderTest> make_named_system(const SutSpec& spec) {
  if (spec.name == SutSpec().name) {
    if (!spec.home.empty()) throw std::invalid_argument("--tvm-home is for --sut tvm");
    return builtin_system();
  }
  return std::make_shared<NamedSystem>(spec);
}

CaseOptions parse_words(const std::vector<std::string>& words) {
  return case_options_from_words(words, make_named_system, /*command_line=*/true);
}

// Every field a flag can set, read from the options themselves (not through replay_flags), so
// that a print and an apply that agree on a wrong field still differ here.
std::string fields(const CaseOptions& o) {
  std::string bugs;
  for (const auto& row : aot::bug_table()) bugs += o.aot.bugs.on(row.bug) ? '1' : '0';
  const SutSpec& sut = system_of(o).spec();
  return "merge=" + std::to_string(o.aot.merge) + " mod=" + o.aot.mod_name +
         " api=" + std::to_string(static_cast<int>(o.aot.api)) +
         " interface=" + std::to_string(static_cast<int>(o.aot.interface)) +
         " reuse=" + std::to_string(o.aot.storage_reuse) +
         " depth=" + std::to_string(o.aot.max_fuse_depth) +
         " num_args=" + std::to_string(o.aot.check_num_args) + " bugs=" + bugs +
         " fault=" + std::to_string(static_cast<int>(o.aot.debug_fault)) + ":" +
         o.aot.debug_fault_pass +
         " cc=" + (o.compiler ? std::to_string(static_cast<int>(*o.compiler)) : "-") +
         " sanitize=" + std::to_string(o.sanitize) + " seed=" + std::to_string(o.input_seed) +
         " ulp=" + std::to_string(o.max_ulp) + " budget=" + std::to_string(o.memory_budget) +
         " no_run=" + std::to_string(o.in_process_only) +
         " structure=" + std::to_string(o.check_structure) +
         " known=" + std::to_string(o.see_past_known) +
         " determinism=" + std::to_string(o.check_determinism) +
         " warnings=" + std::to_string(o.check_warnings) +
         " time=" + std::to_string(o.in_process_budget.count()) +
         " run_timeout=" + std::to_string(o.limits.timeout.count()) +
         " usmp=" + std::to_string(o.memory.usmp) + ":" + o.memory.usmp_algorithm +
         " pools=" + std::to_string(static_cast<int>(o.memory.pools)) +
         " workspace_io=" + std::to_string(o.memory.workspace_io) +
         " align=" + std::to_string(o.memory.workspace_alignment) + ":" +
         std::to_string(o.memory.constant_alignment) +
         " link_params=" + std::to_string(o.memory.link_params) +
         " overlap=" + std::to_string(o.memory.debug_overlap) + " sut=" + sut.name + ":" +
         sut.home + ":" + sut.fixed_home;
}

// A value other than the default for every row, as words (a row another one needs comes first).
std::vector<std::string> example_words(const CaseFlagRow& row) {
  const std::string flag = "--" + std::string(row.name);
  switch (row.id) {
    case CaseFlag::kMerge:
      return {"--no-merge"};
    case CaseFlag::kModName:
      return {flag, "my_mod"};
    case CaseFlag::kApi:
      return {flag, "unpacked"};
    case CaseFlag::kInterface:
      return {"--api", "unpacked", flag, "c"};
    case CaseFlag::kStorageReuse:
      return {"--no-storage-reuse"};
    case CaseFlag::kMaxFuseDepth:
      return {flag, "3"};
    case CaseFlag::kCc:
      return {flag, "gcc"};
    case CaseFlag::kSanitize:
      return {"--cc", "clang", flag};
    case CaseFlag::kCheckNumArgs:
      return {flag};
    case CaseFlag::kInputSeed:
      return {flag, "18446744073709551615"};
    case CaseFlag::kUlp:
      return {flag, "4294967295"};
    case CaseFlag::kMemoryBudget:
      return {flag, "7"};
    case CaseFlag::kInject:
      return {flag, "swapped-output-order", flag, "tuple-arg-first-field"};
    case CaseFlag::kNoRun:
      return {flag};
    case CaseFlag::kStructure:
      return {"--no-structure"};
    case CaseFlag::kKnown:
      return {"--no-known"};
    case CaseFlag::kDeterminism:
      return {"--no-determinism"};
    case CaseFlag::kWarnings:
      return {"--no-warnings"};
    case CaseFlag::kSut:
      return {flag, "other"};
    case CaseFlag::kTvmHome:
      return {"--sut", "other", flag, "/a b/it's"};
    case CaseFlag::kTvmFixedHome:
      return {"--sut", "other", flag, "/fixed"};
    case CaseFlag::kInProcessTime:
      return {flag, "2.5"};
    case CaseFlag::kRunTimeout:
      return {flag, "0.75"};
    case CaseFlag::kDebugFault:
      return {flag, "fuse:throw"};
    // The builtin pipeline takes none of the memory rows: another system does.
    case CaseFlag::kUsmp:
      return {"--sut", "other", flag, "on"};
    case CaseFlag::kUsmpAlgorithm:
      return {"--sut", "other", "--usmp", "on", flag, "hill_climb"};
    case CaseFlag::kPools:
      return {"--sut", "other", "--usmp", "on", flag, "external"};
    case CaseFlag::kWorkspaceIo:
      return {"--sut", "other", "--usmp", "on", "--api", "unpacked", "--interface", "c", flag};
    case CaseFlag::kWorkspaceAlignment:
      return {"--sut", "other", flag, "64"};
    case CaseFlag::kConstantAlignment:
      return {"--sut", "other", flag, "4"};
    case CaseFlag::kLinkParams:
      return {"--sut", "other", "--no-link-params"};
  }
  return {};
}

TEST(CaseFlagTable, EveryFlagsReplayLineReproducesItsOptions) {
  const std::string defaults = fields(parse_words({}));
  for (const auto& row : case_flag_table()) {
    SCOPED_TRACE(std::string(row.name));
    const auto words = example_words(row);
    ASSERT_FALSE(words.empty()) << "no example for a new row: add one to example_words";
    const CaseOptions o = parse_words(words);
    EXPECT_NE(fields(o), defaults) << "the example changes nothing";
    const std::string flags = replay_flags(o);
    if (row.replay == CaseFlagReplay::kNever) {
      // Not part of a case: the replay line leaves it out, and a replay line may not carry it.
      EXPECT_EQ(flags.find("--" + std::string(row.name)), std::string::npos) << flags;
      EXPECT_THROW(
          parse_case_flags(flags + " --" + std::string(row.name) + " /x", make_named_system),
          FlagError);
      continue;
    }
    const CaseOptions back = parse_case_flags(flags, make_named_system);
    EXPECT_EQ(fields(back), fields(o)) << flags;
    EXPECT_EQ(replay_flags(back), flags);
  }
}

TEST(CaseFlagTable, EachDefaultGivenExplicitlyChangesNothing) {
  const std::string defaults = fields(parse_words({}));
  int checked = 0;
  for (const auto& row : case_flag_table()) {
    SCOPED_TRACE(std::string(row.name));
    const std::string flag = "--" + std::string(row.name);
    const std::string shown(row.default_text);
    if (row.kind == CaseFlagKind::kPair) {
      ASSERT_TRUE(shown == "on" || shown == "off") << shown;
      EXPECT_EQ(fields(parse_words({shown == "on" ? flag : "--no-" + std::string(row.name)})),
                defaults);
      // The other half is not the default: other options, or a refusal of the builtin
      // pipeline, which takes only TVM v0.8's memory planning.
      const std::string other = shown == "on" ? "--no-" + std::string(row.name) : flag;
      try {
        EXPECT_NE(fields(parse_words({other})), defaults);
      } catch (const FlagError& e) {
        EXPECT_NE(std::string(e.what()).find("the builtin pipeline models TVM v0.8"),
                  std::string::npos)
            << e.what();
      }
      ++checked;
    } else if (row.kind == CaseFlagKind::kValue && !shown.empty() &&
               shown.find_first_of(" ,$") == std::string::npos) {
      EXPECT_EQ(fields(parse_words({flag, shown})), defaults);
      ++checked;
    }
    // Otherwise a described default (the first compiler installed, an environment variable) or
    // none: nothing to give.
  }
  EXPECT_GE(checked, 12);
}

TEST(CaseFlagTable, BadValuesAreRefusedWithTheFlagNamed) {
  for (const auto& row : case_flag_table()) {
    if (row.kind != CaseFlagKind::kValue && row.kind != CaseFlagKind::kList) continue;
    SCOPED_TRACE(std::string(row.name));
    const std::string flag = "--" + std::string(row.name);
    try {
      parse_words({flag});
      ADD_FAILURE() << "a missing value was taken";
    } catch (const FlagError& e) {
      EXPECT_NE(std::string(e.what()).find(flag), std::string::npos) << e.what();
    }
  }
  for (const std::vector<std::string>& bad :
       std::vector<std::vector<std::string>>{{"--api", "fast"},
                                             {"--max-fuse-depth", "0"},
                                             {"--ulp", "4294967296"},
                                             {"--input-seed", "18446744073709551616"},
                                             {"--memory-budget", "-1"},
                                             {"--in-process-time", "nan"},
                                             {"--cc", "icc"},
                                             {"--merge=yes"},
                                             {"--sut", ""}}) {
    try {
      parse_words(bad);
      ADD_FAILURE() << bad[0] << " took a bad value";
    } catch (const FlagError& e) {
      EXPECT_EQ(std::string(e.what()).rfind(bad[0].substr(0, bad[0].find('=')), 0), 0u) << e.what();
    }
  }
}

TEST(CaseFlagTable, TheBuiltinPipelineRefusesEveryMemoryOptionWithOneLineNamingIt) {
  for (const std::vector<std::string>& words :
       std::vector<std::vector<std::string>>{{"--usmp", "on"},
                                             {"--workspace-alignment", "16"},
                                             {"--constant-alignment", "32"},
                                             {"--no-link-params"},
                                             {"--usmp", "on", "--debug-fault", "usmp:overlap"}}) {
    try {
      parse_words(words);
      ADD_FAILURE() << words[0] << " was taken by the builtin pipeline";
    } catch (const FlagError& e) {
      const std::string what = e.what();
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_NE(what.find(words.back() == "usmp:overlap" ? "usmp:overlap" : words[0]),
                std::string::npos)
          << what;
      EXPECT_NE(what.find("v0.8"), std::string::npos) << what;
    }
  }
  EXPECT_NO_THROW(parse_words({"--usmp", "off", "--workspace-alignment", "8", "--link-params"}));
}

TEST(CaseFlagTable, UsmpOptionsWithoutUsmpAndWorkspaceIoWithoutTheCInterfaceAreRefused) {
  const std::vector<std::string> other{"--sut", "other"};
  auto refused = [&](std::vector<std::string> words, std::string_view why) {
    words.insert(words.begin(), other.begin(), other.end());
    try {
      parse_words(words);
      ADD_FAILURE() << words[2] << " was taken";
    } catch (const FlagError& e) {
      EXPECT_NE(std::string(e.what()).find(why), std::string::npos) << e.what();
    }
  };
  refused({"--usmp-algorithm", "hill_climb"}, "--usmp-algorithm needs --usmp on");
  refused({"--pools", "external"}, "--pools external needs --usmp on");
  refused({"--workspace-io", "--api", "unpacked", "--interface", "c"}, "needs --usmp on");
  refused({"--usmp", "on", "--workspace-io"}, "--workspace-io needs --interface c");
  refused({"--debug-fault", "usmp:overlap"}, "needs --usmp on");
  refused({"--workspace-alignment", "12"}, "power of two");
  refused({"--constant-alignment", "8192"}, "from 1 to 4096");
  refused({"--usmp", "maybe"}, "one of on, off");
  const CaseOptions o = parse_words({"--sut", "other", "--usmp", "on", "--pools", "external",
                                     "--usmp-algorithm", "greedy_by_conflicts", "--debug-fault",
                                     "usmp:overlap", "--workspace-alignment", "64"});
  EXPECT_TRUE(o.memory.usmp);
  EXPECT_EQ(o.memory.pools, MemoryOptions::Pools::kExternal);
  EXPECT_EQ(o.memory.usmp_algorithm, "greedy_by_conflicts");
  EXPECT_TRUE(o.memory.debug_overlap);
  EXPECT_EQ(o.memory.workspace_alignment, 64);
  EXPECT_EQ(replay_flags(parse_case_flags(replay_flags(o), make_named_system)), replay_flags(o));
}

TEST(CaseFlagTable, ATvmHomeWithTheBuiltinPipelineIsRefusedAsOnTheCommandLine) {
  EXPECT_THROW(parse_case_flags("--tvm-home /x", make_named_system), FlagError);
}

// A system the replay line names by its name alone: its spec's home, if any, is no flag of it.
class HomelessSystem : public NamedSystem {
 public:
  using NamedSystem::NamedSystem;
  std::string_view home_flag() const override { return {}; }
};

TEST(CaseFlags, AReplayLineNamesTheHomeUnderTheSystemsOwnFlagAndNoneWithoutOne) {
  const NamedSystem built({"other", "/a b", ""});
  EXPECT_EQ(sut_replay_flags(built), " --sut other --tvm-home '/a b'");
  const HomelessSystem homeless({"other", "/a b", ""});
  EXPECT_EQ(sut_replay_flags(homeless), " --sut other");
  EXPECT_EQ(sut_replay_flags(*builtin_system()), "");
}

TEST(CaseFlags, DefaultsAreThoseOfTheRunCommand) {
  CaseOptions o = parse_case_flags("");
  CaseOptions defaults;
  // The run command checks warnings; the library leaves that to its caller.
  EXPECT_NE(replay_flags(o), replay_flags(defaults));
  defaults.check_warnings = true;
  EXPECT_EQ(replay_flags(o), replay_flags(defaults));
  EXPECT_FALSE(parse_case_flags("--no-warnings").check_warnings);
  EXPECT_TRUE(o.aot.merge);
  EXPECT_FALSE(o.aot.bugs.any());
}

TEST(CaseFlags, ReplayFlagsOfAnyOptionsParseBackToTheSameOptions) {
  using Api = aot::Options::Api;
  using Interface = aot::Options::Interface;
  for (int bits = 0; bits < 16; ++bits) {
    CaseOptions o;
    o.aot.merge = bits & 1;
    o.aot.api = bits & 2 ? Api::kUnpacked : Api::kPacked;
    o.aot.interface = (bits & 2) && (bits & 4) ? Interface::kC : Interface::kPacked;
    o.aot.storage_reuse = bits & 8;
    o.aot.mod_name = bits & 4 ? "m1" : "default";
    o.input_seed = static_cast<std::uint64_t>(bits) + 1;
    if (bits & 1) o.aot.bugs.enable(aot::Bug::kSwappedOutputOrder);
    if (bits & 8) o.compiler = host::CompilerKind::kGcc;
    const std::string flags = replay_flags(o);
    CaseOptions back = parse_case_flags(flags);
    EXPECT_EQ(replay_flags(back), flags);
    EXPECT_EQ(back.aot.mod_name, o.aot.mod_name);
    EXPECT_EQ(back.aot.bugs.on(aot::Bug::kSwappedOutputOrder),
              o.aot.bugs.on(aot::Bug::kSwappedOutputOrder));
  }
}

TEST(CaseFlags, RejectsWhatTheRunCommandRejects) {
  EXPECT_THROW(parse_case_flags("--interface c"), FlagError);  // needs --api unpacked
  EXPECT_THROW(parse_case_flags("--api"), FlagError);
  EXPECT_THROW(parse_case_flags("--api fast"), FlagError);
  EXPECT_THROW(parse_case_flags("--sanitize --cc tcc"), FlagError);  // tcc cannot
  // Without --cc, as on the command line: gcc, else clang.
  EXPECT_EQ(parse_case_flags("--sanitize").compiler, host::sanitizing_compiler());
  EXPECT_THROW(parse_case_flags("--debug-fault fuse:explode"), FlagError);
  EXPECT_EQ(parse_case_flags("--debug-fault fuse:crash").aot.debug_fault_pass, "fuse");
  EXPECT_THROW(parse_case_flags("--in-process-time 0"), FlagError);
  // A program's own time limit (AFL++'s -t): in replay lines when not the default.
  const CaseOptions timed = parse_case_flags("--run-timeout 2.5");
  EXPECT_EQ(timed.limits.timeout, std::chrono::milliseconds(2500));
  EXPECT_NE(replay_flags(timed).find("--run-timeout 2.5"), std::string::npos);
  EXPECT_EQ(replay_flags(parse_case_flags("--run-timeout 10")).find("--run-timeout"),
            std::string::npos);
  EXPECT_THROW(parse_case_flags("--run-timeout 0"), FlagError);
  EXPECT_THROW(parse_case_flags("--run-timeout -1"), FlagError);
  EXPECT_THROW(parse_case_flags("--input-seed -1"), FlagError);
  EXPECT_NO_THROW(parse_case_flags("--interface=c --api=unpacked --ulp 2"));
}

TEST(CaseFlags, ReplayFlagsCarryTheUlpsTheNumArgsChecksAndTheMemoryBudget) {
  CaseOptions o;
  o.max_ulp = 3;
  o.aot.check_num_args = true;
  o.memory_budget = std::uint64_t{5} << 20;
  CaseOptions back = parse_case_flags(replay_flags(o));
  EXPECT_EQ(back.max_ulp, 3u);
  EXPECT_TRUE(back.aot.check_num_args);
  EXPECT_EQ(back.memory_budget, std::uint64_t{5} << 20);
  o.memory_budget = UINT64_MAX;  // no budget
  EXPECT_EQ(parse_case_flags(replay_flags(o)).memory_budget, UINT64_MAX);
  EXPECT_THROW(parse_case_flags("--memory-budget 0"), FlagError);
}

}  // namespace
}  // namespace aotfuzz::oracle

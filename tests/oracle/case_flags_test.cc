// The flags of replay lines (oracle/case_flags.h): shell words, the same flags and defaults as
// `aotfuzz run`, and replay_flags parsed back to the same options.
#include "oracle/case_flags.h"

#include <gtest/gtest.h>

#include <cstdint>

#include "aot/bugs.h"
#include "host/shell_words.h"
#include "oracle/oracle.h"

namespace aotfuzz::oracle {
namespace {

using host::shell_quote;

TEST(CaseFlags, QuotedWordsSplitAsAPosixShellSplitsThem) {
  EXPECT_EQ(split_flags("--mod-name '' --tvm-home '/a b/c'  x\\ y \"q\\\"r\""),
            (std::vector<std::string>{"--mod-name", "", "--tvm-home", "/a b/c", "x y", "q\"r"}));
  EXPECT_THROW(split_flags("--mod-name 'open"), FlagError);
  EXPECT_THROW(split_flags("--mod-name \"open"), FlagError);
}

TEST(CaseFlags, EveryModuleNameSurvivesShellQuotingAndParsingBack) {
  for (const std::string name : {"", "my_mod", "a b", "it's", "$(x)", "tab\there"}) {
    const auto options = parse_case_flags("--merge --mod-name " + shell_quote(name));
    EXPECT_EQ(options.aot.mod_name, name);
  }
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

// Unit tests for the policy flags shared by `aotfuzz gen` and `aotfuzz fuzz`: --knob and --size
// registration, parsing into a validated policy, and printing back as replayable flags.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "cli/common.h"
#include "generator/policy.h"

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

}  // namespace
}  // namespace aotfuzz::cli

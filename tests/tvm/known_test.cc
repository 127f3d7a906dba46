// TVM's known behaviours (tvm/known.def): which releases each applies to, and that a case is
// seen past only when every call that disagrees with its callee is explained by one row.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "tvm/known.h"

namespace aotfuzz::tvm {
namespace {

ArityObservation packed(int passes, int takes) {
  return {aot::CallSiteInfo{"tvmgen_default_ccompiler_main_0", passes, /*packed=*/true}, takes};
}
ArityObservation direct(int passes, int takes) {
  return {aot::CallSiteInfo{"tvmgen_default_ccompiler_main_0", passes, /*packed=*/false}, takes};
}

TEST(Release, ReadsMajorAndMinorFromTvmsVersionStrings) {
  EXPECT_EQ(parse_release("0.18.0"), (Release{0, 18}));
  EXPECT_EQ(parse_release("0.8.dev0"), (Release{0, 8}));
  EXPECT_EQ(parse_release("0.16.dev123+g1234abc"), (Release{0, 16}));
  EXPECT_EQ(parse_release("0.10"), (Release{0, 10}));
  EXPECT_EQ(parse_release("0.0.fake"), (Release{0, 0}));
  EXPECT_LT(*parse_release("0.9.0"), *parse_release("0.10.0"));
  EXPECT_EQ(parse_release(""), std::nullopt);
  EXPECT_EQ(parse_release("unknown"), std::nullopt);
  EXPECT_EQ(parse_release("0"), std::nullopt);
  EXPECT_EQ(parse_release("0.x"), std::nullopt);
  EXPECT_EQ(parse_release("1.2x"), std::nullopt);
}

TEST(KnownBehaviours, EachRowHasItsOwnIdASourceAWhatAndAReleaseRangeThatIsNotEmpty) {
  std::set<std::string> ids;
  ASSERT_FALSE(known_behaviours().empty());
  for (const KnownBehaviour& b : known_behaviours()) {
    EXPECT_TRUE(ids.insert(std::string(b.id)).second) << b.id;
    // Ids go into signatures, which never carry digits.
    EXPECT_EQ(b.id.find_first_of("0123456789 "), std::string_view::npos) << b.id;
    EXPECT_EQ(b.source.rfind("TVM PR #", 0), 0u) << b.source;
    EXPECT_FALSE(b.what.empty()) << b.id;
    EXPECT_NE(b.explains_call, nullptr) << b.id;
    EXPECT_TRUE(b.applies_to(b.since)) << b.id;
    if (b.until) {
      EXPECT_LT(b.since, *b.until) << b.id;
    }
  }
}

TEST(KnownBehaviours, CallsOneArgumentShortAreExplainedFromReleaseSixteenOnAndNotBefore) {
  const std::vector<ArityObservation> calls = {packed(2, 3), packed(3, 4)};
  const KnownBehaviour* why = explain_arity(calls, Release{0, 18});
  ASSERT_NE(why, nullptr);
  EXPECT_EQ(why->id, "cpacked-num-args-one-short");
  EXPECT_NE(explain_arity(calls, Release{0, 16}), nullptr);
  EXPECT_EQ(explain_arity(calls, Release{0, 15}), nullptr);
  EXPECT_EQ(explain_arity(calls, Release{0, 8}), nullptr);
}

TEST(KnownBehaviours, OneCallWrongInAnotherWayLeavesTheCaseAFinding) {
  // Two short instead of one (the #9036 shape on a later release) is not the known behaviour.
  EXPECT_EQ(explain_arity({packed(2, 3), packed(1, 3)}, Release{0, 18}), nullptr);
  // The unpacked API calls directly: a direct call's count is never this behaviour.
  EXPECT_EQ(explain_arity({direct(2, 3)}, Release{0, 18}), nullptr);
  EXPECT_EQ(explain_arity({packed(3, 3), direct(5, 3)}, Release{0, 18}), nullptr);
  // One argument too many is not one short.
  EXPECT_EQ(explain_arity({packed(4, 3)}, Release{0, 18}), nullptr);
}

TEST(KnownBehaviours, ADirectCallOfAPackedDefinitionIsExplainedOnEveryReleaseAndLeftUnrun) {
  ArityObservation call = direct(5, 5);
  call.callee_packed = true;
  EXPECT_TRUE(disagrees(call));
  ArityObservation short_call = direct(3, 5);
  short_call.callee_packed = true;
  for (const Release release : {Release{0, 8}, Release{0, 12}, Release{0, 18}}) {
    const KnownBehaviour* why = explain_arity({call, short_call}, release);
    ASSERT_NE(why, nullptr);
    EXPECT_EQ(why->id, "unpacked-call-of-packed-byoc-function");
    EXPECT_TRUE(why->run_undefined);
  }
  // With a direct call of a direct definition whose count is wrong besides, it stays a finding.
  EXPECT_EQ(explain_arity({call, direct(2, 3)}, Release{0, 18}), nullptr);
  // A packed call of a packed definition is no such call.
  ArityObservation packed_call = packed(3, 3);
  packed_call.callee_packed = true;
  EXPECT_FALSE(disagrees(packed_call));
}

TEST(KnownBehaviours, OnlyTheOneShortRowLetsTheRunGoOn) {
  for (const KnownBehaviour& b : known_behaviours()) {
    EXPECT_EQ(b.run_undefined, b.id != "cpacked-num-args-one-short") << b.id;
  }
}

TEST(KnownBehaviours, CallsThatAllAgreeNeedNoExplanation) {
  EXPECT_EQ(explain_arity({packed(3, 3), direct(2, 2)}, Release{0, 18}), nullptr);
  EXPECT_EQ(explain_arity({}, Release{0, 18}), nullptr);
}

}  // namespace
}  // namespace aotfuzz::tvm

// Tests of the static arity reader: call sites of a hand-written executor, module selection,
// malformed input, and the comparison with the expected arities.
#include <gtest/gtest.h>

#include "oracle/static_arity.h"

namespace aotfuzz::oracle {
namespace {

constexpr const char* kSource = R"(int32_t tvmgen_m_run_model(void* input_0, void* output_0);
int32_t tvmgen_other_run_model(void* input_0) {
  if (other_kernel((TVMValue*) stack_value, (int*) stack_tcode, 9, &ret_val, &ret_tcode, NULL) != 0) return -1;
  return 0;
}
int32_t tvmgen_m_run_model(void* input_0, void* output_0) {
  TVMValue stack_value[3];
  /* call 0 */
  if (tvmgen_m_ext((TVMValue*) stack_value, (int*) stack_tcode, 3, &ret_val, &ret_tcode, NULL) != 0) return -1;
  if (tvmgen_m_fused_add(sid_0, (void*)(input_0), output_0) != 0) return -1;
  if (tvmgen_m_fused_add_1() != 0) return -1;
  if (x != 0) { return 1; }
  return 0;
}
)";

TEST(StaticArity, ReadsPackedAndDirectCallSitesOfTheModulesExecutor) {
  const auto sites = static_arity(kSource, "m");
  const std::vector<aot::CallSiteInfo> want = {
      {"tvmgen_m_ext", 3, true},
      {"tvmgen_m_fused_add", 3, false},
      {"tvmgen_m_fused_add_1", 0, false},
  };
  EXPECT_EQ(sites, want);
  const auto other = static_arity(kSource, "other");
  ASSERT_EQ(other.size(), 1u);
  EXPECT_EQ(other[0].num_args, 9);
}

TEST(StaticArity, ThrowsWithoutAnExecutorOrOnAMalformedCallSite) {
  EXPECT_THROW(static_arity(kSource, "absent"), StaticArityError);
  EXPECT_THROW(static_arity("int32_t tvmgen_m_run_model(void);\n", "m"), StaticArityError);
  EXPECT_THROW(static_arity("int32_t tvmgen_m_run_model(void) {\n"
                            "  if (f((TVMValue*) stack_value, (int*) stack_tcode, n, 0) != 0) "
                            "return -1;\n}\n",
                            "m"),
               StaticArityError);
  EXPECT_THROW(
      static_arity("int32_t tvmgen_m_run_model(void) {\n  if (f(a, (b != 0) return -1;\n}\n", "m"),
      StaticArityError);
  EXPECT_THROW(static_arity("int32_t tvmgen_m_run_model(void) {\n  return 0;\n", "m"),
               StaticArityError);
}

TEST(StaticArity, DifferencesPairExpectedAndActualCallSites) {
  const std::vector<aot::CallSiteInfo> expected = {{"a", 5, true}, {"b", 3, true}};
  EXPECT_TRUE(arity_differences(expected, expected).empty());
  const auto d1 = arity_differences(expected, {{"a", 5, true}, {"b", 2, true}});
  ASSERT_EQ(d1.size(), 1u);
  EXPECT_EQ(d1[0].first.num_args, 3);
  EXPECT_EQ(d1[0].second.num_args, 2);
  const auto d2 = arity_differences(expected, {{"a", 5, true}});
  ASSERT_EQ(d2.size(), 1u);
  EXPECT_EQ(d2[0].second.num_args, -1);
}

}  // namespace
}  // namespace aotfuzz::oracle

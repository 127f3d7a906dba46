// Property tests: every generated module (random seed, random swarm policy, random size) and
// every decoded byte string verifies, keeps regions outlinable and, when asked, merge-safe.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <sstream>

#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/structural.h"
#include "ir/verify.h"
#include "tests/generator/shapes.h"

namespace aotfuzz::generator {
namespace {

// Runs `property` for at least `cases` successful cases (RC_PARAMS may ask for more), so the
// tier covers more ground than RapidCheck's default 100.
template <class Property>
void check_cases(Property property, int cases) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  rc::detail::TestMetadata metadata;
  metadata.id = std::string(info->test_suite_name()) + "/" + info->name();
  metadata.description = info->name();
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::max(params.maxSuccess, cases);
  const auto result = rc::detail::checkTestable(property, metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str();
  }
}

GenPolicy random_policy(std::uint64_t seed, int size) {
  GenPolicy base;
  base.max_ops = size;
  base.targets = {{"ccompiler", 3}, {"dnnl_like", 1}, {"default", 1}};
  base.ops = {{"add", 3}, {"subtract", 1}, {"multiply", 1}};
  base.p_begin_on_tuple = 0.2;
  ir::Rng rng(seed);
  return swarm(base, rng);
}

TEST(GeneratorProperty, EveryGeneratedModuleVerifiesAndStaysOutlinable) {
  check_cases(
      [](std::uint64_t seed, std::uint64_t policy_seed, bool merge_safe) {
        const int size = *rc::gen::inRange(1, 60);
        GenPolicy policy = random_policy(policy_seed, size);
        policy.merge_safe = merge_safe;
        ir::Rng rng(seed);
        const ir::Module m = generate(policy, rng);
        ir::verify(m);  // a VerifyError fails the case
        RC_ASSERT(testing::region_graph_is_acyclic(m));
        if (merge_safe) {
          RC_ASSERT(!testing::has_host_path_inside_merge_group(m));
          RC_ASSERT(testing::partitions_after_merging(m));
          RC_ASSERT(!testing::c_interface_refuses_input_names(m));
        }
        ir::Rng again(seed);
        RC_ASSERT(ir::structural_equal(m, generate(policy, again)));
      },
      1500);
}

TEST(GeneratorProperty, EveryDecodedByteStringVerifies) {
  check_cases(
      [](const std::vector<std::uint8_t>& bytes, std::uint64_t policy_seed) {
        const GenPolicy policy = random_policy(policy_seed, 40);
        const ir::Module m = decode(policy, bytes.data(), bytes.size());
        ir::verify(m);
        RC_ASSERT(testing::region_graph_is_acyclic(m));
        // Swarm drops merge_safe for some policies (generator/policy.h, kMergeUnsafeShare).
        if (policy.merge_safe) {
          RC_ASSERT(!testing::has_host_path_inside_merge_group(m));
          RC_ASSERT(testing::partitions_after_merging(m));
          RC_ASSERT(!testing::c_interface_refuses_input_names(m));
        }
      },
      1500);
}

}  // namespace
}  // namespace aotfuzz::generator

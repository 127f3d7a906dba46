// Unit tests for reference values: construction checks, accessors, flattening, printing and
// the NaN-canonical comparisons.
#include <gtest/gtest.h>

#include "reference/value.h"

namespace aotfuzz::reference {
namespace {

ir::Type f32(std::vector<std::int64_t> shape) {
  return ir::TypeNode::tensor(std::move(shape), ir::DType::kFloat32);
}

TEST(Value, TensorBytesAreLittleEndianElements) {
  Value v = Value::tensor(ir::TypeNode::tensor({2}, ir::DType::kInt32),
                          {0x01, 0x00, 0x00, 0x80, 0xff, 0xff, 0xff, 0xff});
  EXPECT_TRUE(v.is_tensor());
  EXPECT_EQ(v.num_elements(), 2u);
  EXPECT_EQ(v.i32(0), static_cast<std::int32_t>(0x80000001u));
  EXPECT_EQ(v.i32(1), -1);
  Value f = Value::from_f32({1}, {1.5f});
  EXPECT_EQ(f.bytes(), (std::vector<std::uint8_t>{0x00, 0x00, 0xc0, 0x3f}));
  EXPECT_EQ(f.f32_bits(0), 0x3fc00000u);
}

TEST(Value, RejectsAByteCountThatDoesNotMatchTheType) {
  EXPECT_THROW(Value::tensor(f32({2, 2}), std::vector<std::uint8_t>(15)), ValueError);
  EXPECT_THROW(Value::from_f32({3}, {1.0f, 2.0f}), ValueError);
  EXPECT_THROW(Value::tensor(ir::TypeNode::tuple({f32({1})}), {}), ValueError);
}

TEST(Value, RejectsTensorsTooLargeToHold) {
  auto huge = ir::TypeNode::tensor({1 << 20, 1 << 20, 1 << 20}, ir::DType::kInt8);
  EXPECT_THROW(checked_num_elements(huge), ValueError);
  auto overflow = ir::TypeNode::tensor({INT64_MAX, INT64_MAX}, ir::DType::kFloat32);
  EXPECT_THROW(checked_num_elements(overflow), ValueError);
}

TEST(Value, AccessorsCheckDtypeAndRange) {
  Value v = Value::from_i8({3}, {-128, 0, 127});
  EXPECT_EQ(v.i8(0), -128);
  EXPECT_EQ(v.i8(2), 127);
  EXPECT_THROW(v.i8(3), ValueError);
  EXPECT_THROW(v.f32(0), ValueError);
  EXPECT_THROW(v.i32(0), ValueError);
  EXPECT_THROW(v.fields(), ValueError);
  EXPECT_THROW(Value().bytes(), ValueError);
}

TEST(Value, FlattenListsNestedTupleTensorsDepthFirst) {
  Value a = Value::from_f32({1}, {1});
  Value b = Value::from_f32({1}, {2});
  Value c = Value::from_i32({1}, {3});
  Value nested = Value::tuple({Value::tuple({a, Value::tuple({b})}), c});
  EXPECT_EQ(ir::type_to_string(nested.type()),
            "((Tensor[(1), float32], (Tensor[(1), float32],)), Tensor[(1), int32])");
  auto flat = nested.flatten();
  ASSERT_EQ(flat.size(), 3u);
  EXPECT_EQ(flat[0].f32(0), 1.0f);
  EXPECT_EQ(flat[1].f32(0), 2.0f);
  EXPECT_EQ(flat[2].i32(0), 3);
  EXPECT_EQ(a.flatten().size(), 1u);
}

TEST(Value, ToStringShowsSignedZerosNanPayloadsAndTruncates) {
  Value v =
      Value::from_f32_bits({5}, {0x80000000u, 0x7fc00000u, 0x7fc00001u, 0xff800000u, 0x3f800000u});
  EXPECT_EQ(v.to_string(16), "Tensor[(5), float32] [-0, nan, nan(0x7fc00001), -inf, 1]");
  EXPECT_EQ(v.to_string(2), "Tensor[(5), float32] [-0, nan, ...]");
  Value t = Value::tuple({Value::from_i8({2}, {-1, 7}), Value::from_i32({}, {42})});
  EXPECT_EQ(t.to_string(), "(Tensor[(2), int8] [-1, 7], int32 [42])");
}

TEST(BitwiseEqual, TreatsAllNanPayloadsAsEqual) {
  Value a = Value::from_f32_bits({3}, {0x7fc00000u, 0xffc00000u, 0x7f800001u});
  Value b = Value::from_f32_bits({3}, {0x7fc12345u, 0x7fc00000u, 0xffffffffu});
  EXPECT_TRUE(bitwise_equal(a, b));
  EXPECT_FALSE(first_mismatch(a, b).has_value());
}

TEST(BitwiseEqual, DistinguishesPositiveAndNegativeZero) {
  Value pz = Value::from_f32_bits({1}, {0x00000000u});
  Value nz = Value::from_f32_bits({1}, {0x80000000u});
  EXPECT_FALSE(bitwise_equal(pz, nz));
  EXPECT_TRUE(bitwise_equal(pz, pz));
}

TEST(BitwiseEqual, NanNeverEqualsANumber) {
  Value nan = Value::from_f32_bits({1}, {0x7fc00000u});
  Value inf = Value::from_f32_bits({1}, {0x7f800000u});
  EXPECT_FALSE(bitwise_equal(nan, inf));
  EXPECT_FALSE(bitwise_equal(inf, nan));
}

TEST(Value, ATupleTakesAMatchingTypeHintAndIgnoresAnotherOne) {
  const Value a = Value::from_f32({2}, {1, 2});
  const Value b = Value::from_i32({}, {3});
  const ir::Type hint =
      ir::TypeNode::tuple({f32({2}), ir::TypeNode::tensor({}, ir::DType::kInt32)});
  const Value hinted = Value::tuple({a, b}, hint);
  EXPECT_EQ(hinted.type(), hint);
  const Value plain = Value::tuple({a, b});
  EXPECT_TRUE(ir::type_equal(hinted.type(), plain.type()));
  EXPECT_TRUE(bitwise_equal(hinted, plain));
  // A hint that does not describe the fields is ignored, not trusted.
  for (const ir::Type& wrong : {ir::TypeNode::tuple({f32({2})}), f32({2}), ir::Type()}) {
    const Value v = Value::tuple({a, b}, wrong);
    EXPECT_TRUE(ir::type_equal(v.type(), plain.type()));
  }
  EXPECT_THROW(Value::tuple({a, Value()}, hint), ValueError);
}

TEST(Value, FlattenIntoAppends) {
  const Value a = Value::from_f32({1}, {1});
  const Value b = Value::from_f32({1}, {2});
  std::vector<Value> out{a};
  Value::tuple({b, Value::tuple({a})}).flatten(out);
  b.flatten(out);
  Value().flatten(out);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].f32(0), 1.0f);
  EXPECT_EQ(out[1].f32(0), 2.0f);
  EXPECT_EQ(out[2].f32(0), 1.0f);
  EXPECT_EQ(out[3].f32(0), 2.0f);
}

TEST(Value, ElementCountWithinLimitAgreesWithTheCheckedCount) {
  const std::vector<ir::Type> types = {f32({}),
                                       f32({0, 7}),
                                       f32({3, 4}),
                                       ir::TypeNode::tensor({1 << 30}, ir::DType::kInt8),
                                       ir::TypeNode::tensor({(1 << 30) + 1}, ir::DType::kInt8),
                                       f32({1 << 28}),
                                       f32({std::int64_t{1} << 40, std::int64_t{1} << 40}),
                                       ir::TypeNode::tuple({f32({1})})};
  for (const auto& t : types) {
    const auto n = num_elements_within_limit(t);
    if (n) {
      EXPECT_EQ(*n, checked_num_elements(t)) << ir::type_to_string(t);
    } else {
      EXPECT_THROW(checked_num_elements(t), ValueError) << ir::type_to_string(t);
    }
  }
  EXPECT_FALSE(num_elements_within_limit(ir::Type()));
  EXPECT_FALSE(num_elements_within_limit(f32({(1 << 28) + 1})));
  EXPECT_EQ(num_elements_within_limit(f32({1 << 28})), std::size_t{1} << 28);  // exactly the limit
  EXPECT_EQ(num_elements_within_limit(f32({3, 4})), 12u);
}

TEST(BitwiseEqual, RequiresEqualTypes) {
  EXPECT_FALSE(bitwise_equal(Value::from_f32({2}, {1, 2}), Value::from_f32({2, 1}, {1, 2})));
  EXPECT_FALSE(bitwise_equal(Value::from_i32({1}, {0}), Value::from_f32({1}, {0})));
  auto m = first_mismatch(Value::from_f32({2}, {1, 2}), Value::from_f32({1}, {1}));
  ASSERT_TRUE(m.has_value());
  EXPECT_TRUE(m->type_mismatch);
  EXPECT_EQ(m->expected, "Tensor[(2), float32]");
}

TEST(FirstMismatch, NamesTheFlattenedTensorAndElement) {
  Value e = Value::tuple({Value::from_f32({2}, {1, 2}), Value::from_i32({3}, {1, 2, 3})});
  Value a = Value::tuple({Value::from_f32({2}, {1, 2}), Value::from_i32({3}, {1, 2, 4})});
  auto m = first_mismatch(e, a);
  ASSERT_TRUE(m.has_value());
  EXPECT_FALSE(m->type_mismatch);
  EXPECT_EQ(m->flat_index, 1u);
  EXPECT_EQ(m->element, 2u);
  EXPECT_EQ(m->expected, "3");
  EXPECT_EQ(m->actual, "4");
  EXPECT_EQ(m->to_string(), "output 1 element 2: expected 3, got 4");
}

TEST(FirstMismatch, ShowsFloatBitPatterns) {
  auto m = first_mismatch(Value::from_f32({1}, {2.0f}), Value::from_f32({1}, {-0.0f}));
  ASSERT_TRUE(m.has_value());
  EXPECT_EQ(m->expected, "2 (0x40000000)");
  EXPECT_EQ(m->actual, "-0 (0x80000000)");
}

TEST(FirstMismatch, UlpToleranceAcceptsNeighboursOnly) {
  Value one = Value::from_f32_bits({1}, {0x3f800000u});
  Value next = Value::from_f32_bits({1}, {0x3f800001u});
  Value next2 = Value::from_f32_bits({1}, {0x3f800002u});
  EXPECT_TRUE(first_mismatch(one, next, 0).has_value());
  EXPECT_FALSE(first_mismatch(one, next, 1).has_value());
  EXPECT_TRUE(first_mismatch(one, next2, 1).has_value());
  EXPECT_FALSE(first_mismatch(one, next2, 2).has_value());
  // NaN only matches NaN, whatever the tolerance.
  Value nan = Value::from_f32_bits({1}, {0x7fc00000u});
  Value inf = Value::from_f32_bits({1}, {0x7f800000u});
  EXPECT_TRUE(first_mismatch(nan, inf, 0xffffffffu).has_value());
  EXPECT_FALSE(first_mismatch(nan, Value::from_f32_bits({1}, {0xffc00001u}), 0).has_value());
  // Integers stay exact.
  EXPECT_TRUE(
      first_mismatch(Value::from_i32({1}, {1}), Value::from_i32({1}, {2}), 100).has_value());
}

TEST(UlpDistance, CountsAcrossZeroWithSignedZerosOneApart) {
  EXPECT_EQ(ulp_distance(0x00000000u, 0x80000000u), 1u);
  EXPECT_EQ(ulp_distance(0x00000001u, 0x80000001u), 3u);
  EXPECT_EQ(ulp_distance(0x7f7fffffu, 0x7f800000u), 1u);
  EXPECT_EQ(ulp_distance(0x3f800000u, 0x3f800000u), 0u);
  EXPECT_EQ(ulp_distance(0xff800000u, 0x7f800000u), 2u * 0x7f800000u + 1u);
}

}  // namespace
}  // namespace aotfuzz::reference

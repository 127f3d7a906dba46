// Unit tests for seeded input generation: determinism and coverage of special values.
#include <gtest/gtest.h>

#include <cstring>
#include <set>

#include "ir/module.h"
#include "reference/inputs.h"

namespace aotfuzz::reference {
namespace {

ir::Function main_with(std::vector<ir::Type> param_types) {
  std::vector<ir::Var> params;
  for (std::size_t i = 0; i < param_types.size(); ++i) {
    params.push_back(ir::VarNode::make("p" + std::to_string(i), param_types[i]));
  }
  ir::Expr body = params.front();
  return ir::FunctionNode::make(params, body);
}

ir::Type tensor(std::vector<std::int64_t> shape, ir::DType dtype) {
  return ir::TypeNode::tensor(std::move(shape), dtype);
}

std::vector<std::uint8_t> all_bytes(const std::vector<Value>& values) {
  std::vector<std::uint8_t> out;
  for (const auto& v : values) {
    for (const auto& t : v.flatten()) out.insert(out.end(), t.bytes().begin(), t.bytes().end());
  }
  return out;
}

TEST(Inputs, SameSeedGivesTheSameBytes) {
  auto fn = main_with({tensor({10, 10}, ir::DType::kFloat32), tensor({7}, ir::DType::kInt32),
                       tensor({3, 3}, ir::DType::kInt8)});
  for (std::uint64_t seed : {0ull, 1ull, 42ull, 0xdeadbeefull}) {
    EXPECT_EQ(all_bytes(make_inputs(fn, seed)), all_bytes(make_inputs(fn, seed))) << seed;
  }
}

TEST(Inputs, DifferentSeedsGiveDifferentBytes) {
  auto fn = main_with({tensor({10, 10}, ir::DType::kFloat32), tensor({8}, ir::DType::kInt32)});
  std::set<std::vector<std::uint8_t>> seen;
  for (std::uint64_t seed = 0; seed < 20; ++seed) seen.insert(all_bytes(make_inputs(fn, seed)));
  EXPECT_EQ(seen.size(), 20u);
}

TEST(Inputs, ValuesMatchParameterTypesIncludingNestedTuples) {
  auto f = tensor({2, 3}, ir::DType::kFloat32);
  auto i = tensor({4}, ir::DType::kInt8);
  auto tup = ir::TypeNode::tuple({f, ir::TypeNode::tuple({i, tensor({}, ir::DType::kInt32)})});
  auto fn = main_with({f, tup});
  auto inputs = make_inputs(fn, 7);
  ASSERT_EQ(inputs.size(), 2u);
  EXPECT_TRUE(ir::type_equal(inputs[0].type(), f));
  EXPECT_TRUE(inputs[1].is_tuple());
  EXPECT_TRUE(ir::type_equal(inputs[1].type(), tup));
  EXPECT_EQ(inputs[1].flatten().size(), 3u);
}

TEST(Inputs, ChangingOneParameterLeavesTheOthersUnchanged) {
  auto a = make_inputs(
      main_with({tensor({4}, ir::DType::kFloat32), tensor({5}, ir::DType::kFloat32)}), 99);
  auto b = make_inputs(
      main_with({tensor({40}, ir::DType::kInt8), tensor({5}, ir::DType::kFloat32)}), 99);
  EXPECT_EQ(a[1].bytes(), b[1].bytes());
}

TEST(Inputs, AFewSeedsProduceEveryKindOfSpecialValue) {
  auto fn = main_with({tensor({10, 10}, ir::DType::kFloat32), tensor({10, 10}, ir::DType::kInt32),
                       tensor({10, 10}, ir::DType::kInt8)});
  bool nan = false, noncanonical_nan = false, pinf = false, ninf = false, nzero = false,
       pzero = false, denormal = false, flt_max = false;
  bool int_min = false, int_max = false, int8_min = false, int8_max = false, minus_one = false;
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    auto in = make_inputs(fn, seed);
    for (std::size_t k = 0; k < in[0].num_elements(); ++k) {
      const std::uint32_t b = in[0].f32_bits(k);
      const bool is_nan = (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0;
      nan |= is_nan;
      noncanonical_nan |= is_nan && b != 0x7fc00000u;
      pinf |= b == 0x7f800000u;
      ninf |= b == 0xff800000u;
      nzero |= b == 0x80000000u;
      pzero |= b == 0u;
      denormal |= (b & 0x7f800000u) == 0 && (b & 0x7fffffu) != 0;
      flt_max |= (b & 0x7fffffffu) == 0x7f7fffffu;
    }
    for (std::size_t k = 0; k < in[1].num_elements(); ++k) {
      int_min |= in[1].i32(k) == INT32_MIN;
      int_max |= in[1].i32(k) == INT32_MAX;
      minus_one |= in[1].i32(k) == -1;
    }
    for (std::size_t k = 0; k < in[2].num_elements(); ++k) {
      int8_min |= in[2].i8(k) == INT8_MIN;
      int8_max |= in[2].i8(k) == INT8_MAX;
    }
  }
  EXPECT_TRUE(nan);
  EXPECT_TRUE(noncanonical_nan);
  EXPECT_TRUE(pinf);
  EXPECT_TRUE(ninf);
  EXPECT_TRUE(nzero);
  EXPECT_TRUE(pzero);
  EXPECT_TRUE(denormal);
  EXPECT_TRUE(flt_max);
  EXPECT_TRUE(int_min);
  EXPECT_TRUE(int_max);
  EXPECT_TRUE(minus_one);
  EXPECT_TRUE(int8_min);
  EXPECT_TRUE(int8_max);
}

TEST(Inputs, MostFloatsAreOrdinaryFiniteNumbers) {
  // Specials must not drown out ordinary arithmetic: most elements are finite and non-zero.
  auto fn = main_with({tensor({1000}, ir::DType::kFloat32)});
  auto in = make_inputs(fn, 3);
  int ordinary = 0;
  for (std::size_t k = 0; k < 1000; ++k) {
    const std::uint32_t e = in[0].f32_bits(k) & 0x7f800000u;
    ordinary += e != 0 && e != 0x7f800000u;
  }
  EXPECT_GT(ordinary, 750);
}

TEST(Inputs, ZeroSizedTensorsGetNoBytes) {
  auto in = make_inputs(main_with({tensor({0, 3}, ir::DType::kFloat32)}), 1);
  EXPECT_TRUE(in[0].bytes().empty());
}

}  // namespace
}  // namespace aotfuzz::reference

// RapidCheck properties of the reference interpreter: commutativity, the broadcasting rule,
// agreement with host IEEE float arithmetic and integer wrap-around, and input determinism.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <cstring>

#include "ir/module.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace aotfuzz::reference {
namespace {

using Shape = std::vector<std::int64_t>;

bool is_nan(std::uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0; }

std::int64_t count(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

// Two operand shapes that broadcast: each is a suffix of a random output shape with some
// dimensions replaced by 1.
rc::Gen<std::pair<Shape, Shape>> broadcastable_shapes() {
  return rc::gen::exec([] {
    // Weighted towards rank 2-4 and dimensions above 1, where the general broadcasting path
    // (not the same-shape or single-element fast paths) runs; zero-sized dimensions are rare.
    const auto rank =
        *rc::gen::weightedElement<std::size_t>({{1, 0}, {2, 1}, {3, 2}, {4, 3}, {4, 4}});
    Shape out;
    for (std::size_t i = 0; i < rank; ++i) {
      out.push_back(
          *rc::gen::weightedElement<std::int64_t>({{1, 0}, {3, 1}, {4, 2}, {4, 3}, {2, 4}}));
    }
    auto operand = [&] {
      const bool full = *rc::gen::weightedElement<bool>({{3, true}, {2, false}});
      const auto r = full ? rank : *rc::gen::inRange<std::size_t>(0, rank + 1);
      Shape s(out.end() - static_cast<std::ptrdiff_t>(r), out.end());
      for (auto& d : s) {
        if (*rc::gen::weightedElement<bool>({{1, true}, {2, false}})) d = 1;
      }
      return s;
    };
    Shape a = operand();
    Shape b = operand();
    return std::make_pair(a, b);
  });
}

// Float bit patterns: arbitrary bits, special values and small integers.
rc::Gen<std::uint32_t> float_bits() {
  return rc::gen::weightedOneOf<std::uint32_t>(
      {{3, rc::gen::arbitrary<std::uint32_t>()},
       {1, rc::gen::element<std::uint32_t>(0x0u, 0x80000000u, 0x7fc00000u, 0xffc00001u, 0x7f800000u,
                                           0xff800000u, 0x1u, 0x807fffffu, 0x7f7fffffu, 0x00800000u,
                                           0x3f800000u)},
       {2, rc::gen::map(rc::gen::inRange(-16, 17), [](int i) {
          const float f = static_cast<float>(i);
          std::uint32_t b;
          std::memcpy(&b, &f, sizeof b);
          return b;
        })}});
}

ir::DType gen_dtype() {
  return *rc::gen::element(ir::DType::kFloat32, ir::DType::kInt32, ir::DType::kInt8);
}

Value gen_tensor(const Shape& shape, ir::DType dtype) {
  const auto n = static_cast<std::size_t>(count(shape));
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i < n; ++i) {
    std::uint32_t w =
        dtype == ir::DType::kFloat32 ? *float_bits() : *rc::gen::arbitrary<std::uint32_t>();
    for (std::size_t k = 0; k < ir::dtype_bytes(dtype); ++k)
      bytes.push_back(static_cast<std::uint8_t>(w >> (8 * k)));
  }
  return Value::tensor(ir::TypeNode::tensor(shape, dtype), std::move(bytes));
}

// Hand-written rule: pad the shorter shape with leading 1s; each dimension is the non-1 one.
Shape expected_broadcast(Shape a, Shape b) {
  while (a.size() < b.size()) a.insert(a.begin(), 1);
  while (b.size() < a.size()) b.insert(b.begin(), 1);
  Shape out;
  for (std::size_t i = 0; i < a.size(); ++i) out.push_back(a[i] == 1 ? b[i] : a[i]);
  return out;
}

// Row-major offset in `in` of the output multi-index `idx` (broadcast dimensions pinned to 0).
std::size_t source_offset(const Shape& in, const Shape& out, const std::vector<std::int64_t>& idx) {
  std::size_t off = 0;
  const std::size_t lead = out.size() - in.size();
  for (std::size_t d = 0; d < in.size(); ++d) {
    const std::int64_t i = in[d] == 1 ? 0 : idx[lead + d];
    off = off * static_cast<std::size_t>(in[d]) + static_cast<std::size_t>(i);
  }
  return off;
}

std::vector<std::int64_t> unravel(std::int64_t flat, const Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = shape.size(); d-- > 0;) {
    idx[d] = flat % shape[d];
    flat /= shape[d];
  }
  return idx;
}

// The expected element computed directly with host arithmetic, as 32 bits.
std::uint32_t host_op(ir::Op op, ir::DType dtype, const Value& a, std::size_t i, const Value& b,
                      std::size_t j) {
  switch (dtype) {
    case ir::DType::kFloat32: {
      const float x = a.f32(i);
      const float y = b.f32(j);
      float r = op == ir::Op::kAdd ? x + y : op == ir::Op::kSubtract ? x - y : x * y;
      std::uint32_t bits;
      std::memcpy(&bits, &r, sizeof bits);
      return bits;
    }
    case ir::DType::kInt32: {
      const auto x = static_cast<std::uint32_t>(a.i32(i));
      const auto y = static_cast<std::uint32_t>(b.i32(j));
      return op == ir::Op::kAdd ? x + y : op == ir::Op::kSubtract ? x - y : x * y;
    }
    case ir::DType::kInt8: {
      const auto x = static_cast<std::uint32_t>(static_cast<std::uint8_t>(a.i8(i)));
      const auto y = static_cast<std::uint32_t>(static_cast<std::uint8_t>(b.i8(j)));
      return (op == ir::Op::kAdd ? x + y : op == ir::Op::kSubtract ? x - y : x * y) & 0xffu;
    }
  }
  return 0;
}

std::uint32_t element_bits(const Value& v, std::size_t i) {
  switch (v.type()->dtype()) {
    case ir::DType::kFloat32:
      return v.f32_bits(i);
    case ir::DType::kInt32:
      return static_cast<std::uint32_t>(v.i32(i));
    case ir::DType::kInt8:
      return static_cast<std::uint8_t>(v.i8(i));
  }
  return 0;
}

Value run_binary(ir::Op op, const Value& a, const Value& b) {
  auto x = ir::VarNode::make("x", a.type());
  auto y = ir::VarNode::make("y", b.type());
  ir::Module m;
  m.add("main", ir::FunctionNode::make({x, y}, ir::CallNode::make(op, {x, y})));
  return run_main(m, {a, b});
}

RC_GTEST_PROP(InterpreterProperties, AddIsCommutative, ()) {
  const auto [sa, sb] = *broadcastable_shapes();
  const ir::DType dtype = gen_dtype();
  const Value a = gen_tensor(sa, dtype);
  const Value b = gen_tensor(sb, dtype);
  const Value ab = run_binary(ir::Op::kAdd, a, b);
  const Value ba = run_binary(ir::Op::kAdd, b, a);
  RC_ASSERT(bitwise_equal(ab, ba));
  // Raw bits agree too, except where both operands are NaN (x86 returns the first one's payload).
  const Shape out = ab.type()->shape();
  for (std::int64_t k = 0; k < count(out); ++k) {
    const auto idx = unravel(k, out);
    const std::size_t i = source_offset(sa, out, idx);
    const std::size_t j = source_offset(sb, out, idx);
    const bool both_nan =
        dtype == ir::DType::kFloat32 && is_nan(a.f32_bits(i)) && is_nan(b.f32_bits(j));
    if (!both_nan) RC_ASSERT(element_bits(ab, k) == element_bits(ba, k));
  }
}

RC_GTEST_PROP(InterpreterProperties, BroadcastShapeAndElementsFollowTheNumpyRule, ()) {
  const auto [sa, sb] = *broadcastable_shapes();
  const ir::DType dtype = gen_dtype();
  const ir::Op op = *rc::gen::element(ir::Op::kAdd, ir::Op::kSubtract, ir::Op::kMultiply);
  const Value a = gen_tensor(sa, dtype);
  const Value b = gen_tensor(sb, dtype);
  const Value r = run_binary(op, a, b);
  const Shape out = expected_broadcast(sa, sb);
  RC_ASSERT(r.type()->shape() == out);
  RC_ASSERT(broadcast_shapes(sa, sb) == out);
  for (std::int64_t k = 0; k < count(out); ++k) {
    const auto idx = unravel(k, out);
    const std::uint32_t want =
        host_op(op, dtype, a, source_offset(sa, out, idx), b, source_offset(sb, out, idx));
    const std::uint32_t got = element_bits(r, static_cast<std::size_t>(k));
    if (dtype == ir::DType::kFloat32 && is_nan(want)) {
      RC_ASSERT(is_nan(got));
    } else {
      RC_ASSERT(got == want);
    }
  }
}

RC_GTEST_PROP(InterpreterProperties, AddEqualsHostFloatAdditionForRandomBits, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(1, 65);
  const auto xs =
      *rc::gen::container<std::vector<std::uint32_t>>(n, rc::gen::arbitrary<std::uint32_t>());
  const auto ys =
      *rc::gen::container<std::vector<std::uint32_t>>(n, rc::gen::arbitrary<std::uint32_t>());
  const Shape shape{static_cast<std::int64_t>(n)};
  const Value r =
      run_binary(ir::Op::kAdd, Value::from_f32_bits(shape, xs), Value::from_f32_bits(shape, ys));
  for (std::size_t i = 0; i < n; ++i) {
    float x, y;
    std::memcpy(&x, &xs[i], 4);
    std::memcpy(&y, &ys[i], 4);
    const float sum = x + y;
    std::uint32_t want;
    std::memcpy(&want, &sum, 4);
    const std::uint32_t got = r.f32_bits(i);
    RC_ASSERT(got == want || (is_nan(got) && is_nan(want)));
  }
}

RC_GTEST_PROP(InterpreterProperties, ElementwiseOpsNeverChangeTheirInputs, ()) {
  const auto [sa, sb] = *broadcastable_shapes();
  const ir::DType dtype = gen_dtype();
  const Value a = gen_tensor(sa, dtype);
  const Value b = gen_tensor(sb, dtype);
  const auto a_bytes = a.bytes();
  const auto b_bytes = b.bytes();
  run_binary(*rc::gen::element(ir::Op::kAdd, ir::Op::kSubtract, ir::Op::kMultiply), a, b);
  RC_ASSERT(a.bytes() == a_bytes);
  RC_ASSERT(b.bytes() == b_bytes);
}

RC_GTEST_PROP(InputProperties, SameSeedSameBytesForAnyShape, (std::uint64_t seed)) {
  const auto [sa, sb] = *broadcastable_shapes();
  const ir::DType dtype = gen_dtype();
  auto x = ir::VarNode::make("x", ir::TypeNode::tensor(sa, dtype));
  auto y = ir::VarNode::make("y", ir::TypeNode::tuple({ir::TypeNode::tensor(sb, dtype)}));
  auto fn = ir::FunctionNode::make({x, y}, x);
  const auto first = make_inputs(fn, seed);
  const auto second = make_inputs(fn, seed);
  RC_ASSERT(first.size() == 2u);
  for (std::size_t i = 0; i < 2; ++i) {
    RC_ASSERT(ir::type_equal(first[i].type(), fn->params()[i]->type()));
    const auto fa = first[i].flatten();
    const auto fb = second[i].flatten();
    RC_ASSERT(fa.size() == fb.size());
    for (std::size_t k = 0; k < fa.size(); ++k) RC_ASSERT(fa[k].bytes() == fb[k].bytes());
  }
}

RC_GTEST_PROP(ComparisonProperties, ZeroUlpToleranceIsTheBitwiseRule, ()) {
  const auto n = *rc::gen::inRange<std::size_t>(1, 9);
  const auto xs = *rc::gen::container<std::vector<std::uint32_t>>(n, float_bits());
  auto ys = xs;
  const auto k = *rc::gen::inRange<std::size_t>(0, n);
  ys[k] = *float_bits();
  const Value a = Value::from_f32_bits({static_cast<std::int64_t>(n)}, xs);
  const Value b = Value::from_f32_bits({static_cast<std::int64_t>(n)}, ys);
  RC_ASSERT(first_mismatch(a, b, 0).has_value() == first_mismatch(a, b).has_value());
  RC_ASSERT(bitwise_equal(a, b) == bitwise_equal(b, a));
  RC_ASSERT(bitwise_equal(a, b) == (xs[k] == ys[k] || (is_nan(xs[k]) && is_nan(ys[k]))));
}

}  // namespace
}  // namespace aotfuzz::reference

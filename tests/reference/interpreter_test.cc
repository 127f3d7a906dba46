// Unit tests for the reference interpreter: hand-computed arithmetic, broadcasting, IEEE special
// values, integer wrap-around, tuples, global and local function calls, errors and scale.
#include <gtest/gtest.h>

#include <chrono>
#include <cstring>
#include <functional>
#include <string>

#include "ir/module.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace aotfuzz::reference {
namespace {

using ir::CallNode;
using ir::DType;
using ir::Expr;
using ir::FunctionNode;
using ir::Op;
using ir::TupleGetItemNode;
using ir::TupleNode;
using ir::VarNode;

ir::Type f32(std::vector<std::int64_t> shape) {
  return ir::TypeNode::tensor(std::move(shape), DType::kFloat32);
}

// @main(a, b) { op(a, b) } for the given operand types.
ir::Module binary_module(Op op, ir::Type ta, ir::Type tb) {
  auto a = VarNode::make("a", std::move(ta));
  auto b = VarNode::make("b", std::move(tb));
  ir::Module m;
  m.add("main", FunctionNode::make({a, b}, CallNode::make(op, {a, b})));
  return m;
}

std::uint32_t bits_of(float f) {
  std::uint32_t b;
  std::memcpy(&b, &f, sizeof b);
  return b;
}

// op on two one-element float32 tensors given as bit patterns; returns the result's bits.
std::uint32_t f32_binary(Op op, std::uint32_t x, std::uint32_t y) {
  auto m = binary_module(op, f32({1}), f32({1}));
  Value r = run_main(m, {Value::from_f32_bits({1}, {x}), Value::from_f32_bits({1}, {y})});
  return r.f32_bits(0);
}

std::int32_t i32_binary(Op op, std::int32_t x, std::int32_t y) {
  auto t = ir::TypeNode::tensor({1}, DType::kInt32);
  Value r =
      run_main(binary_module(op, t, t), {Value::from_i32({1}, {x}), Value::from_i32({1}, {y})});
  return r.i32(0);
}

std::int8_t i8_binary(Op op, std::int8_t x, std::int8_t y) {
  auto t = ir::TypeNode::tensor({1}, DType::kInt8);
  Value r = run_main(binary_module(op, t, t), {Value::from_i8({1}, {x}), Value::from_i8({1}, {y})});
  return r.i8(0);
}

bool is_nan(std::uint32_t b) { return (b & 0x7f800000u) == 0x7f800000u && (b & 0x7fffffu) != 0; }

TEST(Interpreter, AddsSubtractsAndMultipliesElementwise) {
  auto m_add = binary_module(Op::kAdd, f32({2, 2}), f32({2, 2}));
  Value a = Value::from_f32({2, 2}, {1, 2, 3, 4});
  Value b = Value::from_f32({2, 2}, {10, 20, 30, 40});
  EXPECT_TRUE(bitwise_equal(run_main(m_add, {a, b}), Value::from_f32({2, 2}, {11, 22, 33, 44})));
  auto m_sub = binary_module(Op::kSubtract, f32({2, 2}), f32({2, 2}));
  EXPECT_TRUE(bitwise_equal(run_main(m_sub, {a, b}), Value::from_f32({2, 2}, {-9, -18, -27, -36})));
  auto m_mul = binary_module(Op::kMultiply, f32({2, 2}), f32({2, 2}));
  EXPECT_TRUE(bitwise_equal(run_main(m_mul, {a, b}), Value::from_f32({2, 2}, {10, 40, 90, 160})));
}

TEST(Interpreter, ConstantsEvaluateToTheirElementsInTheirDtype) {
  // x + [1, -2] (int8, wrapping), and a scalar float32 constant returned beside it.
  auto x = VarNode::make("x", ir::TypeNode::tensor({2}, DType::kInt8));
  const Expr c = ir::ConstantNode::make(ir::TypeNode::tensor({2}, DType::kInt8), {127, -2});
  const Expr s = ir::ConstantNode::make(f32({}), {-16777216});
  ir::Module m;
  m.add("main", FunctionNode::make({x}, TupleNode::make({CallNode::make(Op::kAdd, {x, c}), s})));
  const Value r = run_main(m, {Value::from_i8({2}, {1, 1})});
  ASSERT_TRUE(r.is_tuple());
  EXPECT_TRUE(bitwise_equal(r.fields()[0], Value::from_i8({2}, {-128, -1})))
      << r.to_string(4);
  EXPECT_TRUE(bitwise_equal(r.fields()[1], Value::from_f32({}, {-16777216.0f})));
  EXPECT_TRUE(bitwise_equal(constant_value(c->type(), {127, -2}), Value::from_i8({2}, {127, -2})));
}

TEST(Interpreter, BroadcastsAcrossRanksLikeNumpy) {
  // (2, 1, 3) + (4, 1) -> (2, 4, 3): out[i][j][k] = a[i][0][k] + b[j][0].
  auto m = binary_module(Op::kAdd, f32({2, 1, 3}), f32({4, 1}));
  Value a = Value::from_f32({2, 1, 3}, {0, 1, 2, 10, 11, 12});
  Value b = Value::from_f32({4, 1}, {100, 200, 300, 400});
  Value expected =
      Value::from_f32({2, 4, 3}, {100, 101, 102, 200, 201, 202, 300, 301, 302, 400, 401, 402,
                                  110, 111, 112, 210, 211, 212, 310, 311, 312, 410, 411, 412});
  Value r = run_main(m, {a, b});
  EXPECT_EQ(ir::type_to_string(r.type()), "Tensor[(2, 4, 3), float32]");
  EXPECT_TRUE(bitwise_equal(r, expected)) << r.to_string(24);
}

TEST(Interpreter, BroadcastsScalarsAndMiddleDimensions) {
  // Rank 0 against rank 2, and (3, 1) - (1, 2) with the non-commutative op.
  auto m = binary_module(Op::kMultiply, f32({}), f32({2, 2}));
  Value r = run_main(m, {Value::from_f32({}, {3}), Value::from_f32({2, 2}, {1, 2, 3, 4})});
  EXPECT_TRUE(bitwise_equal(r, Value::from_f32({2, 2}, {3, 6, 9, 12})));
  auto s = binary_module(Op::kSubtract, f32({3, 1}), f32({1, 2}));
  Value d = run_main(s, {Value::from_f32({3, 1}, {10, 20, 30}), Value::from_f32({1, 2}, {1, 2})});
  EXPECT_TRUE(bitwise_equal(d, Value::from_f32({3, 2}, {9, 8, 19, 18, 29, 28})));
}

TEST(Interpreter, BroadcastsZeroSizedDimensions) {
  auto m = binary_module(Op::kAdd, f32({0, 3}), f32({1, 3}));
  Value r = run_main(m, {Value::from_f32({0, 3}, {}), Value::from_f32({1, 3}, {1, 2, 3})});
  EXPECT_EQ(ir::type_to_string(r.type()), "Tensor[(0, 3), float32]");
  EXPECT_TRUE(r.bytes().empty());
}

TEST(Interpreter, NanPlusOneIsNan) {
  EXPECT_TRUE(is_nan(f32_binary(Op::kAdd, 0x7fc00000u, bits_of(1.0f))));
  EXPECT_TRUE(is_nan(f32_binary(Op::kAdd, bits_of(1.0f), 0xffc01234u)));
}

TEST(Interpreter, InfinityMinusInfinityIsNan) {
  EXPECT_TRUE(is_nan(f32_binary(Op::kAdd, 0x7f800000u, 0xff800000u)));
  EXPECT_TRUE(is_nan(f32_binary(Op::kSubtract, 0x7f800000u, 0x7f800000u)));
  EXPECT_TRUE(is_nan(f32_binary(Op::kMultiply, 0x7f800000u, 0x00000000u)));
  EXPECT_EQ(f32_binary(Op::kAdd, 0x7f800000u, bits_of(1.0f)), 0x7f800000u);
}

TEST(Interpreter, SignedZerosFollowIeeeRules) {
  EXPECT_EQ(f32_binary(Op::kAdd, 0x80000000u, 0x80000000u), 0x80000000u);       // -0 + -0 = -0
  EXPECT_EQ(f32_binary(Op::kAdd, 0x80000000u, 0x00000000u), 0x00000000u);       // -0 + +0 = +0
  EXPECT_EQ(f32_binary(Op::kSubtract, 0x80000000u, 0x00000000u), 0x80000000u);  // -0 - +0
  EXPECT_EQ(f32_binary(Op::kSubtract, bits_of(5.0f), bits_of(5.0f)), 0x00000000u);
  EXPECT_EQ(f32_binary(Op::kMultiply, bits_of(-2.0f), 0x00000000u), 0x80000000u);
}

TEST(Interpreter, DenormalsAreNeitherFlushedNorTreatedAsZero) {
  EXPECT_EQ(f32_binary(Op::kAdd, 0x00000001u, 0x00000001u), 0x00000002u);
  EXPECT_EQ(f32_binary(Op::kAdd, 0x007fffffu, 0x00000001u), 0x00800000u);  // into FLT_MIN
  EXPECT_EQ(f32_binary(Op::kSubtract, 0x00800000u, 0x00000001u), 0x007fffffu);
  // 3 * 2^-149 * 0.5 = 1.5 * 2^-149: a tie, rounded to even (2 * 2^-149).
  EXPECT_EQ(f32_binary(Op::kMultiply, 0x00000003u, bits_of(0.5f)), 0x00000002u);
  EXPECT_EQ(f32_binary(Op::kMultiply, 0x00000001u, bits_of(0.5f)), 0x00000000u);
}

TEST(Interpreter, RoundsToNearestEvenInSinglePrecision) {
  // 1 + 2^-24 is a tie between 1 and 1 + 2^-23: even is 1. Double rounding would also give 1,
  // but (1 + 2^-23) + 2^-24 must go up to the even neighbour 1 + 2^-22.
  EXPECT_EQ(f32_binary(Op::kAdd, 0x3f800000u, 0x33800000u), 0x3f800000u);
  EXPECT_EQ(f32_binary(Op::kAdd, 0x3f800001u, 0x33800000u), 0x3f800002u);
  EXPECT_EQ(f32_binary(Op::kAdd, 0x7f7fffffu, 0x7f7fffffu), 0x7f800000u);  // overflow to +inf
  EXPECT_EQ(f32_binary(Op::kMultiply, bits_of(0.1f), bits_of(3.0f)), bits_of(0.1f * 3.0f));
}

TEST(Interpreter, Int32ArithmeticWraps) {
  EXPECT_EQ(i32_binary(Op::kAdd, INT32_MAX, 1), INT32_MIN);
  EXPECT_EQ(i32_binary(Op::kSubtract, INT32_MIN, 1), INT32_MAX);
  EXPECT_EQ(i32_binary(Op::kMultiply, 65536, 65536), 0);
  EXPECT_EQ(i32_binary(Op::kMultiply, INT32_MIN, -1), INT32_MIN);
  EXPECT_EQ(i32_binary(Op::kMultiply, 100000, 100000), 1410065408);  // 10^10 mod 2^32
  EXPECT_EQ(i32_binary(Op::kAdd, -7, 3), -4);
}

TEST(Interpreter, Int8ArithmeticWraps) {
  EXPECT_EQ(i8_binary(Op::kAdd, 127, 1), -128);
  EXPECT_EQ(i8_binary(Op::kSubtract, -128, 1), 127);
  EXPECT_EQ(i8_binary(Op::kMultiply, 16, 16), 0);
  EXPECT_EQ(i8_binary(Op::kMultiply, -128, -1), -128);
  EXPECT_EQ(i8_binary(Op::kMultiply, 100, 3), 44);  // 300 mod 256
  EXPECT_EQ(i8_binary(Op::kAdd, -5, 2), -3);
}

TEST(Interpreter, AnnotationsAreIdentities) {
  auto x = VarNode::make("x", f32({2}));
  Expr e = ir::compiler_end(ir::compiler_begin(x, "ccompiler"), "ccompiler");
  ir::Module m;
  m.add("main", FunctionNode::make({x}, e));
  Value in = Value::from_f32_bits({2}, {0x7fc00001u, 0x80000000u});
  Value r = run_main(m, {in});
  EXPECT_EQ(r.bytes(), in.bytes());  // Even NaN payloads pass through untouched.
}

TEST(Interpreter, BuildsNestedTuplesAndSelectsFields) {
  auto a = VarNode::make("a", f32({1}));
  auto b = VarNode::make("b", f32({1}));
  Expr inner = TupleNode::make({a, b});
  Expr outer = TupleNode::make({inner, a});
  Expr picked =
      CallNode::make(Op::kSubtract, {TupleGetItemNode::make(TupleGetItemNode::make(outer, 0), 1),
                                     TupleGetItemNode::make(outer, 1)});
  ir::Module m;
  m.add("main", FunctionNode::make({a, b}, TupleNode::make({picked, outer})));
  Value r = run_main(m, {Value::from_f32({1}, {3}), Value::from_f32({1}, {10})});
  ASSERT_TRUE(r.is_tuple());
  auto flat = r.flatten();
  ASSERT_EQ(flat.size(), 4u);
  EXPECT_EQ(flat[0].f32(0), 7.0f);  // b - a
  EXPECT_EQ(flat[1].f32(0), 3.0f);
  EXPECT_EQ(flat[2].f32(0), 10.0f);
  EXPECT_EQ(flat[3].f32(0), 3.0f);
}

TEST(Interpreter, AcceptsTupleParametersForMain) {
  auto t = VarNode::make("t", ir::TypeNode::tuple({f32({2}), f32({2})}));
  ir::Module m;
  m.add("main", FunctionNode::make({t}, CallNode::make(Op::kAdd, {TupleGetItemNode::make(t, 0),
                                                                  TupleGetItemNode::make(t, 1)})));
  Value in = Value::tuple({Value::from_f32({2}, {1, 2}), Value::from_f32({2}, {30, 40})});
  EXPECT_TRUE(bitwise_equal(run_main(m, {in}), Value::from_f32({2}, {31, 42})));
}

// The annotated graph of TVM issue #9036.
ir::Module annotated_graph() {
  auto x = VarNode::make("x", f32({10, 10}));
  auto w0 = VarNode::make("w0", f32({10, 10}));
  auto w1 = VarNode::make("w1", f32({10, 10}));
  const std::string cc = "ccompiler";
  Expr z0 = ir::compiler_end(
      CallNode::make(Op::kAdd, {ir::compiler_begin(x, cc), ir::compiler_begin(w0, cc)}), cc);
  Expr z1 = ir::compiler_end(
      CallNode::make(Op::kAdd, {ir::compiler_begin(z0, cc), ir::compiler_begin(w1, cc)}), cc);
  ir::Module m;
  m.add("main", FunctionNode::make({x, w0, w1}, CallNode::make(Op::kAdd, {z0, z1})));
  return m;
}

// The external function of the partitioned #9036 module: returns (x + w0, (x + w0) + w1).
ir::Function external_function() {
  auto i0 = VarNode::make("ccompiler_0_i0", f32({10, 10}));
  auto i1 = VarNode::make("ccompiler_0_i1", f32({10, 10}));
  auto i2 = VarNode::make("ccompiler_0_i2", f32({10, 10}));
  Expr s3 = CallNode::make(Op::kAdd, {i0, i1});
  Expr s4 = CallNode::make(Op::kAdd, {s3, i2});
  const std::string name = "tvmgen_mod_name_ccompiler_main_0";
  ir::Attrs attrs{{"Inline", std::int64_t{1}},
                  {"Compiler", std::string("ccompiler")},
                  {"global_symbol", name},
                  {"Primitive", std::int64_t{1}}};
  return FunctionNode::make({i0, i1, i2}, TupleNode::make({s3, s4}), attrs);
}

// The partitioned module quoted in the issue: @main calls the external function and adds the
// two fields of its tuple result.
ir::Module partitioned_graph() {
  const std::string name = "tvmgen_mod_name_ccompiler_main_0";
  ir::Module m;
  m.add(name, external_function());
  auto x = VarNode::make("x", f32({10, 10}));
  auto w0 = VarNode::make("w0", f32({10, 10}));
  auto w1 = VarNode::make("w1", f32({10, 10}));
  Expr call = CallNode::make(m.global_var(name), {x, w0, w1});
  Expr body =
      CallNode::make(Op::kAdd, {TupleGetItemNode::make(call, 0), TupleGetItemNode::make(call, 1)});
  ir::Module out;
  out.add("main", FunctionNode::make({x, w0, w1}, body));
  out.add(name, m.functions()[0].second);
  return out;
}

// The fused form: a Primitive local function takes the whole tuple as one parameter.
ir::Module fused_graph() {
  const std::string name = "tvmgen_mod_name_ccompiler_main_0";
  ir::Module ext;
  ext.add(name, external_function());
  auto x = VarNode::make("x", f32({10, 10}));
  auto w0 = VarNode::make("w0", f32({10, 10}));
  auto w1 = VarNode::make("w1", f32({10, 10}));
  Expr call = CallNode::make(ext.global_var(name), {x, w0, w1});
  auto p0 = VarNode::make("p0", ir::TypeNode::tuple({f32({10, 10}), f32({10, 10})}));
  auto fused = FunctionNode::make(
      {p0},
      CallNode::make(Op::kAdd, {TupleGetItemNode::make(p0, 0), TupleGetItemNode::make(p0, 1)}),
      ir::Attrs{{"Primitive", std::int64_t{1}}});
  ir::Module out;
  out.add("main", FunctionNode::make({x, w0, w1}, CallNode::make(fused, {call})));
  out.add(name, ext.functions()[0].second);
  return out;
}

TEST(Interpreter, GlobalFunctionReturningATupleMatchesTheAnnotatedGraph) {
  ir::Module annotated = annotated_graph();
  ir::Module partitioned = partitioned_graph();
  for (std::uint64_t seed = 0; seed < 8; ++seed) {
    auto inputs = make_inputs(annotated.main(), seed);
    Value expected = run_main(annotated, inputs);
    Value actual = run_main(partitioned, inputs);
    auto m = first_mismatch(expected, actual);
    EXPECT_FALSE(m.has_value()) << "seed " << seed << ": " << m->to_string();
    // And both equal z0 + (z0 + w1) computed directly with host floats.
    for (std::size_t i = 0; i < 100; ++i) {
      const float z0 = inputs[0].f32(i) + inputs[1].f32(i);
      const float want = z0 + (z0 + inputs[2].f32(i));
      Value w = Value::from_f32({1}, {want});
      Value got = Value::from_f32_bits({1}, {actual.f32_bits(i)});
      ASSERT_TRUE(bitwise_equal(w, got)) << "seed " << seed << " element " << i;
    }
  }
}

TEST(Interpreter, LocalPrimitiveFunctionTakesAWholeTupleParameter) {
  ir::Module annotated = annotated_graph();
  ir::Module fused = fused_graph();
  for (std::uint64_t seed = 100; seed < 108; ++seed) {
    auto inputs = make_inputs(annotated.main(), seed);
    EXPECT_TRUE(bitwise_equal(run_main(annotated, inputs), run_main(fused, inputs))) << seed;
  }
}

TEST(Interpreter, EvaluatesANamedFunctionDirectly) {
  ir::Module m = partitioned_graph();
  Value a = Value::from_f32({10, 10}, std::vector<float>(100, 1.0f));
  Value r = evaluate(m, "tvmgen_mod_name_ccompiler_main_0", {a, a, a});
  ASSERT_TRUE(r.is_tuple());
  EXPECT_EQ(r.fields()[0].f32(99), 2.0f);
  EXPECT_EQ(r.fields()[1].f32(0), 3.0f);
}

TEST(Interpreter, SharedLocalFunctionCanBeCalledTwice) {
  auto p = VarNode::make("p", f32({1}));
  auto twice = FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, p}));
  auto x = VarNode::make("x", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(twice, {CallNode::make(twice, {x})})));
  EXPECT_EQ(run_main(m, {Value::from_f32({1}, {3})}).f32(0), 12.0f);
}

TEST(InterpreterErrors, MissingFunctionIsAnEvalError) {
  ir::Module m = annotated_graph();
  try {
    evaluate(m, "nope", {});
    FAIL() << "expected EvalError";
  } catch (const EvalError& e) {
    EXPECT_NE(std::string(e.what()).find("@nope"), std::string::npos) << e.what();
  }
  ir::Module no_main;
  EXPECT_THROW(run_main(no_main, {}), EvalError);
}

TEST(InterpreterErrors, WrongArgumentCountOrTypeIsAnEvalError) {
  ir::Module m = binary_module(Op::kAdd, f32({2}), f32({2}));
  Value two = Value::from_f32({2}, {1, 2});
  EXPECT_THROW(run_main(m, {two}), EvalError);
  EXPECT_THROW(run_main(m, {two, two, two}), EvalError);
  try {
    run_main(m, {two, Value::from_f32({3}, {1, 2, 3})});
    FAIL() << "expected EvalError";
  } catch (const EvalError& e) {
    EXPECT_NE(std::string(e.what()).find("argument 1 (%b)"), std::string::npos) << e.what();
  }
  EXPECT_THROW(run_main(m, {two, Value::from_i32({2}, {1, 2})}), EvalError);
  EXPECT_THROW(run_main(m, {two, Value()}), EvalError);
  // An EvalError is an ir::Error, like every bad-input error.
  EXPECT_THROW(run_main(m, {two}), ir::Error);
}

TEST(InterpreterErrors, CallOfAFunctionMissingFromTheModuleIsAnEvalError) {
  ir::Module lib;
  lib.add("helper",
          FunctionNode::make({VarNode::make("p", f32({1}))}, VarNode::make("q", f32({1}))));
  auto x = VarNode::make("x", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(lib.global_var("helper"), {x})));
  try {
    run_main(m, {Value::from_f32({1}, {0})});
    FAIL() << "expected EvalError";
  } catch (const EvalError& e) {
    EXPECT_NE(std::string(e.what()).find("@helper"), std::string::npos) << e.what();
  }
}

TEST(InterpreterErrors, FreeVariableIsAnEvalError) {
  auto p = VarNode::make("p", f32({1}));
  auto stray = VarNode::make("stray", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, stray})));
  try {
    run_main(m, {Value::from_f32({1}, {0})});
    FAIL() << "expected EvalError";
  } catch (const EvalError& e) {
    EXPECT_NE(std::string(e.what()).find("%stray"), std::string::npos) << e.what();
  }
}

TEST(InterpreterErrors, RecursionIsAnEvalErrorNotAHang) {
  auto ft = ir::TypeNode::func({f32({1})}, f32({1}));
  auto self = ir::GlobalVarNode::make("main", ft);
  auto x = VarNode::make("x", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(self, {x})));
  EXPECT_THROW(run_main(m, {Value::from_f32({1}, {0})}), EvalError);
}

TEST(InterpreterErrors, CalleeWhoseTypeDisagreesWithTheCallIsAnEvalError) {
  // The call was built against @g : (T) -> T but the module's @g returns a tuple.
  auto stale = ir::GlobalVarNode::make("g", ir::TypeNode::func({f32({1})}, f32({1})));
  auto x = VarNode::make("x", f32({1}));
  auto p = VarNode::make("p", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(Op::kAdd, {CallNode::make(stale, {x}), x})));
  m.add("g", FunctionNode::make({p}, TupleNode::make({p, p})));
  EXPECT_THROW(run_main(m, {Value::from_f32({1}, {0})}), EvalError);
  // And one whose parameter types differ from the call's arguments.
  ir::Module m2;
  m2.add("main", FunctionNode::make({x}, CallNode::make(stale, {x})));
  m2.add("g", FunctionNode::make({VarNode::make("q", f32({2}))}, VarNode::make("q2", f32({2}))));
  EXPECT_THROW(run_main(m2, {Value::from_f32({1}, {0})}), EvalError);
}

// @main(x) = @twice(local(x)) where @twice(y) = y + y and local = fn(z) { z * z }.
ir::Module calls_module() {
  auto y = VarNode::make("y", f32({2}));
  auto twice = FunctionNode::make({y}, CallNode::make(Op::kAdd, {y, y}));
  auto z = VarNode::make("z", f32({2}));
  auto local = FunctionNode::make({z}, CallNode::make(Op::kMultiply, {z, z}));
  auto x = VarNode::make("x", f32({2}));
  ir::Module m;
  m.add("twice", twice);
  m.add("main", FunctionNode::make(
                    {x}, CallNode::make(m.global_var("twice"), {CallNode::make(local, {x})})));
  return m;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const EvalError& e) {
    return e.what();
  }
  return "no error";
}

TEST(InterpreterPlanCache, ReusedPlansGiveTheSameValuesAndMessagesAsFreshEvaluation) {
  const Value x = Value::from_f32({2}, {3.0f, -1.5f});
  PlanCache plans;
  for (int round = 0; round < 3; ++round) {
    // A new but equal module each round: its nodes are new, so nothing may be taken from the old.
    const ir::Module m = calls_module();
    const Value fresh = run_main(m, {x});
    const Value cached = run_main(m, {x}, plans);
    EXPECT_EQ(cached.bytes(), fresh.bytes());
    EXPECT_EQ(cached.f32(0), 18.0f);
    EXPECT_EQ(cached.f32(1), 4.5f);
    EXPECT_EQ(evaluate(m, "twice", {x}, plans).f32(0), 6.0f);
    EXPECT_EQ(error_of([&] {
                evaluate(m, "twice", {x, x}, plans);
              }),
              error_of([&] {
                evaluate(m, "twice", {x, x});
              }));
  }
}

TEST(InterpreterPlanCache, AFunctionOutsideTheModuleIsEvaluatedUnderTheGivenName) {
  const Value x = Value::from_f32({2}, {2.0f, 5.0f});
  const ir::Module m = calls_module();
  auto z = VarNode::make("z", f32({2}));
  const ir::Function square = FunctionNode::make({z}, CallNode::make(Op::kMultiply, {z, z}));
  PlanCache plans;
  EXPECT_EQ(evaluate_function(m, square, "@kernel", {x}, plans).f32(1), 25.0f);
  // Its global calls resolve in the module given, and only there.
  auto w = VarNode::make("w", f32({2}));
  const ir::Function caller = FunctionNode::make({w}, CallNode::make(m.global_var("twice"), {w}));
  EXPECT_EQ(evaluate_function(m, caller, "@kernel", {x}, plans).f32(0), 4.0f);
  const std::string error =
      error_of([&] { evaluate_function(ir::Module{}, caller, "@kernel", {x}, plans); });
  EXPECT_NE(error.find("@kernel"), std::string::npos) << error;
  EXPECT_NE(error.find("not in the module"), std::string::npos) << error;
}

TEST(InterpreterPlanCache, MessagesNameTheFunctionAsEvaluatedNowNotAsFirstPlanned) {
  // One plan serves every name a function is evaluated under; messages use the current one.
  const Value x = Value::from_f32({2}, {2.0f, 5.0f});
  const ir::Module m = calls_module();
  auto w = VarNode::make("w", f32({2}));
  const ir::Function caller = FunctionNode::make({w}, CallNode::make(m.global_var("twice"), {w}));
  PlanCache plans;
  const std::string first =
      error_of([&] { evaluate_function(ir::Module{}, caller, "@one", {x}, plans); });
  EXPECT_EQ(first, "@one: call of @twice, which is not in the module");
  EXPECT_EQ(evaluate_function(m, caller, "@two", {x}, plans).f32(1), 10.0f);
  EXPECT_EQ(error_of([&] { evaluate_function(ir::Module{}, caller, "@three", {x}, plans); }),
            "@three: call of @twice, which is not in the module");
  EXPECT_EQ(error_of([&] {
              evaluate_function(m, caller, "@four", {x, x}, plans);
            }),
            "@four takes 1 arguments, got 2");
}

TEST(InterpreterPlanCache, ALocalFunctionIsNamedAfterItsCaller) {
  // @main(x) = fn(z) { @missing(z) }(x): the local function reports as @main/fn.
  auto ft = ir::TypeNode::func({f32({1})}, f32({1}));
  auto z = VarNode::make("z", f32({1}));
  auto local = FunctionNode::make({z}, CallNode::make(ir::GlobalVarNode::make("missing", ft), {z}));
  auto x = VarNode::make("x", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(local, {x})));
  const Value in = Value::from_f32({1}, {1});
  const std::string expected = "@main/fn: call of @missing, which is not in the module";
  EXPECT_EQ(error_of([&] { run_main(m, {in}); }), expected);
  PlanCache plans;
  EXPECT_EQ(error_of([&] { run_main(m, {in}, plans); }), expected);
  EXPECT_EQ(error_of([&] { run_main(m, {in}, plans); }), expected);
}

TEST(InterpreterPlanCache, AFailedPlanIsNotKeptAndNamesEachCaller) {
  auto p = VarNode::make("p", f32({1}));
  auto stray = VarNode::make("stray", f32({1}));
  const ir::Function bad = FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, stray}));
  const Value in = Value::from_f32({1}, {0});
  PlanCache plans;
  EXPECT_EQ(error_of([&] { evaluate_function(ir::Module{}, bad, "@a", {in}, plans); }),
            "@a: variable %stray is not a parameter of this function");
  EXPECT_EQ(error_of([&] { evaluate_function(ir::Module{}, bad, "@b", {in}, plans); }),
            "@b: variable %stray is not a parameter of this function");
}

TEST(InterpreterPlanCache, AnEvaluationThatThrewLeavesTheCacheAsBefore) {
  // The failed evaluation stops inside @caller's frame; afterwards @caller is not "active"
  // (no false recursion error) and nothing of the failed run leaks into the next.
  const Value x = Value::from_f32({2}, {3.0f, -1.5f});
  const ir::Module m = calls_module();
  auto w = VarNode::make("w", f32({2}));
  const ir::Function caller = FunctionNode::make({w}, CallNode::make(m.global_var("twice"), {w}));
  PlanCache plans;
  for (int round = 0; round < 3; ++round) {
    EXPECT_NE(error_of([&] { evaluate_function(ir::Module{}, caller, "@k", {x}, plans); }),
              "no error");
    const Value r = evaluate_function(m, caller, "@k", {x}, plans);
    EXPECT_EQ(r.f32(0), 6.0f);
    EXPECT_EQ(r.f32(1), -3.0f);
    EXPECT_TRUE(bitwise_equal(run_main(m, {x}, plans), run_main(m, {x})));
  }
}

TEST(InterpreterPlanCache, RecursionIsFoundWithTheCacheToo) {
  auto ft = ir::TypeNode::func({f32({1})}, f32({1}));
  auto self = ir::GlobalVarNode::make("main", ft);
  auto x = VarNode::make("x", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(self, {x})));
  const Value in = Value::from_f32({1}, {0});
  PlanCache plans;
  const std::string fresh = error_of([&] { run_main(m, {in}); });
  EXPECT_EQ(fresh, "recursive call of @main");
  EXPECT_EQ(error_of([&] { run_main(m, {in}, plans); }), fresh);
  EXPECT_EQ(error_of([&] { run_main(m, {in}, plans); }), fresh);
}

TEST(InterpreterScale, AHundredThousandNodeChainDoesNotOverflowTheStack) {
  constexpr int kNodes = 100'000;
  auto x = VarNode::make("x", f32({1}));
  auto y = VarNode::make("y", f32({1}));
  Expr e = x;
  for (int i = 0; i < kNodes; ++i) e = CallNode::make(Op::kAdd, {e, y});
  ir::Module m;
  m.add("main", FunctionNode::make({x, y}, e));
  e.reset();
  Value r = run_main(m, {Value::from_f32({1}, {0}), Value::from_f32({1}, {1})});
  EXPECT_EQ(r.f32(0), static_cast<float>(kNodes));  // Exact: below 2^24.
}

TEST(InterpreterScale, AChainWhoseNodesHaveSeveralUsesKeepsValuesUntilTheLastUse) {
  // e_{i+1} = e_i * e_i - e_i: each node is used three times, twice by one parent.
  constexpr int kNodes = 50'000;
  auto x = VarNode::make("x", f32({3}));
  Expr e = x;
  for (int i = 0; i < kNodes; ++i) {
    e = CallNode::make(Op::kSubtract, {CallNode::make(Op::kMultiply, {e, e}), e});
  }
  ir::Module m;
  m.add("main", FunctionNode::make({x}, e));
  e.reset();
  // Fixed points of v*v - v: 0 -> 0 and 2 -> 2; -0 * -0 - -0 = +0 - -0 = +0.
  Value r = run_main(m, {Value::from_f32_bits({3}, {0x00000000u, 0x40000000u, 0x80000000u})});
  EXPECT_TRUE(bitwise_equal(r, Value::from_f32_bits({3}, {0x00000000u, 0x40000000u, 0u})));
}

TEST(InterpreterScale, TenThousandNestedGlobalCallsDoNotOverflowTheStack) {
  // @f_i(x, y) = add(@f_{i+1}(x, y), y); @f_N(x, y) = x; @main = @f_0.
  constexpr int kDepth = 10'000;
  ir::Module m;
  auto ft = ir::TypeNode::func({f32({1}), f32({1})}, f32({1}));
  std::vector<std::pair<std::string, ir::Function>> fns;
  for (int i = kDepth; i >= 0; --i) {
    auto x = VarNode::make("x", f32({1}));
    auto y = VarNode::make("y", f32({1}));
    Expr body = x;
    if (i < kDepth) {
      auto next = ir::GlobalVarNode::make("f" + std::to_string(i + 1), ft);
      body = CallNode::make(Op::kAdd, {CallNode::make(next, {x, y}), y});
    }
    fns.emplace_back(i == 0 ? "main" : "f" + std::to_string(i), FunctionNode::make({x, y}, body));
  }
  for (auto it = fns.rbegin(); it != fns.rend(); ++it) m.add(it->first, it->second);
  Value r = run_main(m, {Value::from_f32({1}, {0.5f}), Value::from_f32({1}, {1})});
  EXPECT_EQ(r.f32(0), 0.5f + kDepth);
}

TEST(InterpreterScale, TenThousandNestedLocalFunctionsDoNotOverflowTheStack) {
  // fn_N(p) = p; fn_i(p) = add(fn_{i+1}(p), p): the result is (N + 1) * x.
  constexpr int kDepth = 10'000;
  ir::Function inner;
  for (int i = kDepth; i >= 0; --i) {
    auto p = VarNode::make("p", f32({1}));
    Expr body = p;
    if (inner) body = CallNode::make(Op::kAdd, {CallNode::make(inner, {p}), p});
    inner = FunctionNode::make({p}, body);
  }
  auto x = VarNode::make("x", f32({1}));
  ir::Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(inner, {x})));
  inner.reset();
  EXPECT_EQ(run_main(m, {Value::from_f32({1}, {2})}).f32(0), 2.0f * (kDepth + 1));
}

}  // namespace
}  // namespace aotfuzz::reference

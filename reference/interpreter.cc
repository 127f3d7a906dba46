// Iterative evaluation: one precomputed post-order plan per function body, an explicit frame
// stack for calls, and per-slot use counts so intermediates die after their last use.
#include "reference/interpreter.h"

#include <bit>
#include <cfloat>
#include <cstring>
#include <memory>
#include <unordered_map>
#include <utility>

#include "ir/node_map.h"
#include "ir/traversal.h"

// The reference must be plain IEEE single precision: no fast-math, no x87 excess precision.
#ifdef __FAST_MATH__
#error "reference/interpreter.cc must not be built with -ffast-math"
#endif
static_assert(FLT_EVAL_METHOD == 0, "float arithmetic must be evaluated in float precision");
static_assert(std::endian::native == std::endian::little,
              "tensor bytes are little-endian and are accessed in place");

namespace aotfuzz::reference {
namespace {

constexpr std::uint32_t kNoParam = UINT32_MAX;

// Element kernels. Integer ops go through unsigned types so overflow wraps without UB.
template <ir::Op kOp>
float f32_op(float a, float b) {
  if constexpr (kOp == ir::Op::kAdd) return a + b;
  if constexpr (kOp == ir::Op::kSubtract) return a - b;
  if constexpr (kOp == ir::Op::kMultiply) return a * b;
}

template <ir::Op kOp>
std::int32_t i32_op(std::int32_t a, std::int32_t b) {
  const auto ua = static_cast<std::uint32_t>(a);
  const auto ub = static_cast<std::uint32_t>(b);
  std::uint32_t r = 0;
  if constexpr (kOp == ir::Op::kAdd) r = ua + ub;
  if constexpr (kOp == ir::Op::kSubtract) r = ua - ub;
  if constexpr (kOp == ir::Op::kMultiply) r = ua * ub;
  return static_cast<std::int32_t>(r);
}

template <ir::Op kOp>
std::int8_t i8_op(std::int8_t a, std::int8_t b) {
  // Promoted to int: the results fit, and truncation to 8 bits is modulo 2^8 (C++20).
  const int ua = static_cast<std::uint8_t>(a);
  const int ub = static_cast<std::uint8_t>(b);
  int r = 0;
  if constexpr (kOp == ir::Op::kAdd) r = ua + ub;
  if constexpr (kOp == ir::Op::kSubtract) r = ua - ub;
  if constexpr (kOp == ir::Op::kMultiply) r = ua * ub;
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(r & 0xff));
}

// Strides of an operand of shape `in` broadcast against `out` (right-aligned, 0 where the
// operand's dimension is 1 or absent).
std::vector<std::size_t> broadcast_strides(const std::vector<std::int64_t>& in,
                                           const std::vector<std::int64_t>& out) {
  const std::size_t r = out.size();
  // Guards the index arithmetic below against an inconsistent IR type.
  if (in.size() > r) throw EvalError("operand rank exceeds the result rank");
  std::vector<std::size_t> strides(r, 0);
  std::size_t stride = 1;
  for (std::size_t k = 0; k < in.size(); ++k) {
    const std::size_t din = in.size() - 1 - k;
    const std::size_t dout = r - 1 - k;
    if (in[din] != 1 && in[din] != out[dout]) {
      throw EvalError("operand dimension " + std::to_string(in[din]) + " does not broadcast to " +
                      std::to_string(out[dout]));
    }
    const auto d = static_cast<std::size_t>(in[din]);
    strides[dout] = (d == 1 && out[dout] != 1) ? 0 : stride;
    stride *= d;
  }
  return strides;
}

template <class T, class F>
void broadcast_loop(const std::vector<std::uint8_t>& a_bytes,
                    const std::vector<std::int64_t>& a_shape,
                    const std::vector<std::uint8_t>& b_bytes,
                    const std::vector<std::int64_t>& b_shape,
                    const std::vector<std::int64_t>& out_shape,
                    std::vector<std::uint8_t>& out_bytes, F f) {
  const std::size_t n = out_bytes.size() / sizeof(T);
  if (n == 0) return;
  // Elements go through memcpy: the storage is bytes, never T objects.
  const std::uint8_t* pa = a_bytes.data();
  const std::uint8_t* pb = b_bytes.data();
  std::uint8_t* po = out_bytes.data();
  auto a = [pa](std::size_t i) {
    T v;
    std::memcpy(&v, pa + i * sizeof(T), sizeof(T));
    return v;
  };
  auto b = [pb](std::size_t i) {
    T v;
    std::memcpy(&v, pb + i * sizeof(T), sizeof(T));
    return v;
  };
  auto put = [po](std::size_t i, T v) { std::memcpy(po + i * sizeof(T), &v, sizeof(T)); };
  const std::size_t na = a_bytes.size() / sizeof(T);
  const std::size_t nb = b_bytes.size() / sizeof(T);
  // Fast paths. An operand with as many elements as the output is not broadcast in any
  // dimension, so its row-major index equals the output's.
  if (na == n && nb == n) {
    for (std::size_t i = 0; i < n; ++i) put(i, f(a(i), b(i)));
    return;
  }
  if (nb == 1 && na == n) {
    const T y = b(0);
    for (std::size_t i = 0; i < n; ++i) put(i, f(a(i), y));
    return;
  }
  if (na == 1 && nb == n) {
    const T x = a(0);
    for (std::size_t i = 0; i < n; ++i) put(i, f(x, b(i)));
    return;
  }
  const std::size_t r = out_shape.size();
  const std::vector<std::size_t> sa = broadcast_strides(a_shape, out_shape);
  const std::vector<std::size_t> sb = broadcast_strides(b_shape, out_shape);
  const auto inner = static_cast<std::size_t>(out_shape[r - 1]);
  const std::size_t ia_step = sa[r - 1];
  const std::size_t ib_step = sb[r - 1];
  std::vector<std::size_t> idx(r, 0);
  std::size_t ia = 0;
  std::size_t ib = 0;
  std::size_t o = 0;
  while (o < n) {
    for (std::size_t j = 0; j < inner; ++j) put(o++, f(a(ia + j * ia_step), b(ib + j * ib_step)));
    // Odometer over the outer dimensions.
    for (std::size_t d = r - 1; d-- > 0;) {
      const auto dim = static_cast<std::size_t>(out_shape[d]);
      ++idx[d];
      ia += sa[d];
      ib += sb[d];
      if (idx[d] < dim) break;
      ia -= sa[d] * dim;
      ib -= sb[d] * dim;
      idx[d] = 0;
    }
  }
}

template <ir::Op kOp>
void dispatch_dtype(ir::DType dtype, const Value& a, const Value& b,
                    const std::vector<std::int64_t>& out_shape, std::vector<std::uint8_t>& out) {
  const auto& as = a.type()->shape();
  const auto& bs = b.type()->shape();
  switch (dtype) {
    case ir::DType::kFloat32:
      broadcast_loop<float>(a.bytes(), as, b.bytes(), bs, out_shape, out, f32_op<kOp>);
      break;
    case ir::DType::kInt32:
      broadcast_loop<std::int32_t>(a.bytes(), as, b.bytes(), bs, out_shape, out, i32_op<kOp>);
      break;
    case ir::DType::kInt8:
      broadcast_loop<std::int8_t>(a.bytes(), as, b.bytes(), bs, out_shape, out, i8_op<kOp>);
      break;
  }
}

// `op(a, b)` producing a tensor of `out_type` (already known to be their broadcast).
Value elementwise(ir::Op op, const Value& a, const Value& b, ir::Type out_type) {
  const std::size_t n = checked_num_elements(out_type);
  std::vector<std::uint8_t> out(n * ir::dtype_bytes(out_type->dtype()));
  const ir::DType dtype = out_type->dtype();
  const auto& shape = out_type->shape();
  switch (op) {
    case ir::Op::kAdd:
      dispatch_dtype<ir::Op::kAdd>(dtype, a, b, shape, out);
      break;
    case ir::Op::kSubtract:
      dispatch_dtype<ir::Op::kSubtract>(dtype, a, b, shape, out);
      break;
    case ir::Op::kMultiply:
      dispatch_dtype<ir::Op::kMultiply>(dtype, a, b, shape, out);
      break;
    default:
      throw EvalError(std::string(ir::op_name(op)) + " is not an elementwise op");
  }
  return Value::tensor(std::move(out_type), std::move(out));
}

void check_elementwise_operands(ir::Op op, const Value& a, const Value& b) {
  if (!a.is_tensor() || !b.is_tensor()) {
    throw EvalError(std::string(ir::op_name(op)) + " expects tensors, got " +
                    (a.empty() ? "<empty>" : ir::type_to_string(a.type())) + " and " +
                    (b.empty() ? "<empty>" : ir::type_to_string(b.type())));
  }
  if (a.type()->dtype() != b.type()->dtype()) {
    throw EvalError(std::string(ir::op_name(op)) + ": dtype mismatch " +
                    ir::type_to_string(a.type()) + " vs " + ir::type_to_string(b.type()));
  }
}

// Per-function evaluation plan, built once per evaluate() call and function.
struct Plan {
  std::string name;                        // `@f` or `fn` (for messages)
  std::vector<const ir::ExprNode*> nodes;  // post order of the body (the module keeps them alive)
  std::vector<std::uint32_t> kid_begin;    // CSR: children slots of node i are
  std::vector<std::uint32_t> kid_slots;    //   kid_slots[kid_begin[i] .. kid_begin[i + 1])
  std::vector<std::int32_t> uses;          // initial number of parent edges per slot
  std::vector<std::uint32_t> param;        // Var nodes: parameter index, else kNoParam
};

std::unique_ptr<Plan> make_plan(const ir::FunctionNode& fn, std::string name) {
  auto plan = std::make_unique<Plan>();
  plan->name = std::move(name);
  const std::vector<ir::Expr>& order = fn.body_order();
  if (order.size() >= UINT32_MAX) throw EvalError(plan->name + ": function body too large");
  ir::NodeMap<std::uint32_t> slot(order.size());
  ir::NodeMap<std::uint32_t> param_of(fn.params().size());
  for (std::size_t i = 0; i < fn.params().size(); ++i) {
    param_of.try_emplace(fn.params()[i].get(), static_cast<std::uint32_t>(i));
  }
  plan->nodes.reserve(order.size());
  plan->kid_begin.reserve(order.size() + 1);
  plan->uses.assign(order.size(), 0);
  plan->param.assign(order.size(), kNoParam);
  for (std::size_t i = 0; i < order.size(); ++i) {
    const ir::ExprNode* node = order[i].get();
    slot.try_emplace(node, static_cast<std::uint32_t>(i));
    plan->nodes.push_back(node);
    plan->kid_begin.push_back(static_cast<std::uint32_t>(plan->kid_slots.size()));
    for (std::size_t k = 0; k < ir::num_children(*node); ++k) {
      const std::uint32_t s = *slot.find(ir::child(*node, k).get());  // children come first
      plan->kid_slots.push_back(s);
      ++plan->uses[s];
    }
    if (node->kind() == ir::ExprKind::kVar) {
      const std::uint32_t* p = param_of.find(node);
      if (p == nullptr) {
        throw EvalError(plan->name + ": variable " + ir::describe(*node) +
                        " is not a parameter of this function");
      }
      plan->param[i] = *p;
    }
  }
  plan->kid_begin.push_back(static_cast<std::uint32_t>(plan->kid_slots.size()));
  return plan;
}

struct Frame {
  const Plan* plan;
  const ir::FunctionNode* fn;
  std::vector<Value> args;
  std::vector<Value> slots;
  std::vector<std::int32_t> uses;
  std::size_t pc = 0;
};

void check_args(const std::string& name, const ir::FunctionNode& fn,
                const std::vector<Value>& args) {
  const auto& params = fn.params();
  if (params.size() != args.size()) {
    throw EvalError(name + " takes " + std::to_string(params.size()) + " arguments, got " +
                    std::to_string(args.size()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].empty() || !ir::type_equal(params[i]->type(), args[i].type())) {
      throw EvalError(name + " argument " + std::to_string(i) + " (%" + params[i]->name() +
                      "): expected " + ir::type_to_string(params[i]->type()) + ", got " +
                      (args[i].empty() ? "<empty>" : ir::type_to_string(args[i].type())));
    }
  }
}

}  // namespace

struct PlanCache::Entries {
  struct Entry {
    ir::Expr keep;  // the planned function (its nodes must outlive the plan)
    std::shared_ptr<const Plan> plan;  // shared, not unique: NodeMap needs copyable values
  };
  // Plans by function, one per name it was evaluated under (Plan::name); mostly just one.
  ir::NodeMap<std::vector<Entry>> by_function;
};

PlanCache::PlanCache() : entries_(std::make_unique<Entries>()) {}
PlanCache::~PlanCache() = default;

namespace {

class Machine {
 public:
  Machine(const ir::Module& module, PlanCache::Entries& plans) : module_(module), plans_(plans) {}

  Value run(const std::string& function, std::vector<Value> args) {
    const ir::Function* fn = module_.find(function);
    if (fn == nullptr) throw EvalError("no function @" + function + " in the module");
    return run(*fn, "@" + function, std::move(args));
  }

  Value run(const ir::Function& fn, const std::string& name, std::vector<Value> args) {
    push(fn, name, std::move(args));
    for (;;) {
      Frame& f = frames_.back();
      const Plan& plan = *f.plan;
      if (f.pc == plan.nodes.size()) {
        Value result = std::move(f.slots.back());
        --active_[f.fn];
        frames_.pop_back();
        if (frames_.empty()) return result;
        Frame& caller = frames_.back();
        const ir::ExprNode* call = caller.plan->nodes[caller.pc];
        if (!ir::type_equal(result.type(), call->type())) {
          throw EvalError(caller.plan->name + ": " + ir::describe(*call) +
                          " expects a result of type " + ir::type_to_string(call->type()) +
                          ", the callee returned " + ir::type_to_string(result.type()));
        }
        caller.slots[caller.pc++] = std::move(result);
        continue;
      }
      step(f);
    }
  }

 private:
  const Plan& plan_for(const ir::Expr& keep, const std::string& name) {
    std::vector<PlanCache::Entries::Entry>& entries = plans_.by_function[keep.get()];
    for (const auto& e : entries) {
      if (e.plan->name == name) return *e.plan;
    }
    const auto& fn = static_cast<const ir::FunctionNode&>(*keep);
    entries.push_back({keep, make_plan(fn, name)});
    return *entries.back().plan;
  }

  // `keep` is the function to call (a FunctionNode).
  void push(const ir::Expr& keep, const std::string& name, std::vector<Value> args) {
    const auto& fn = static_cast<const ir::FunctionNode&>(*keep);
    check_args(name, fn, args);
    if (active_[&fn] > 0) throw EvalError("recursive call of " + name);
    const Plan& plan = plan_for(keep, name);
    ++active_[&fn];
    Frame f{&plan, &fn, std::move(args), {}, plan.uses, 0};
    f.slots.resize(plan.nodes.size());
    frames_.push_back(std::move(f));
  }

  // Drops one use of each child of the current node, freeing values that are no longer needed.
  static void consume(Frame& f) {
    const Plan& plan = *f.plan;
    for (std::uint32_t k = plan.kid_begin[f.pc]; k < plan.kid_begin[f.pc + 1]; ++k) {
      const std::uint32_t s = plan.kid_slots[k];
      if (--f.uses[s] == 0) f.slots[s] = Value();
    }
  }

  const Value& kid(const Frame& f, std::size_t k) const {
    const Value& v = f.slots[f.plan->kid_slots[f.plan->kid_begin[f.pc] + k]];
    if (v.empty()) {
      const ir::ExprNode* node = f.plan->nodes[f.pc];
      throw EvalError(f.plan->name + ": operand " + std::to_string(k) + " of " +
                      ir::describe(*node) + " has no value (a function used as a value?)");
    }
    return v;
  }

  // Evaluates the node at f.pc; advances pc unless it pushed a call frame.
  void step(Frame& f) {
    const Plan& plan = *f.plan;
    const ir::ExprNode* node = plan.nodes[f.pc];
    Value out;
    switch (node->kind()) {
      case ir::ExprKind::kVar:
        // Each Var is one node, visited once per frame: the argument can move into its slot.
        out = std::move(f.args[plan.param[f.pc]]);
        break;
      case ir::ExprKind::kGlobalVar:
      case ir::ExprKind::kFunction:
        // Callees have no runtime value; the Call below resolves them.
        ++f.pc;
        return;
      case ir::ExprKind::kTuple: {
        const auto& tuple = static_cast<const ir::TupleNode&>(*node);
        std::vector<Value> fields;
        fields.reserve(tuple.fields().size());
        for (std::size_t k = 0; k < tuple.fields().size(); ++k) fields.push_back(kid(f, k));
        out = Value::tuple(std::move(fields));
        break;
      }
      case ir::ExprKind::kTupleGetItem: {
        const auto& get = static_cast<const ir::TupleGetItemNode&>(*node);
        const Value& t = kid(f, 0);
        if (!t.is_tuple() || get.index() < 0 ||
            static_cast<std::size_t>(get.index()) >= t.fields().size()) {
          throw EvalError(plan.name + ": " + ir::describe(*node) + " applied to a value of type " +
                          ir::type_to_string(t.type()));
        }
        out = t.fields()[static_cast<std::size_t>(get.index())];
        break;
      }
      case ir::ExprKind::kCall: {
        const auto& call = static_cast<const ir::CallNode&>(*node);
        if (call.op()) {
          out = apply_op(f, call);
          break;
        }
        call_function(f, call);
        return;
      }
    }
    consume(f);
    f.slots[f.pc++] = std::move(out);
  }

  Value apply_op(const Frame& f, const ir::CallNode& call) {
    const ir::Op op = *call.op();
    if (ir::is_annotation(op)) return kid(f, 0);
    const Value& a = kid(f, 0);
    const Value& b = kid(f, 1);
    check_elementwise_operands(op, a, b);
    const ir::Type& out_type = call.type();
    // The node's type is the broadcast of its operand types; the values must have those types.
    if (!ir::type_equal(a.type(), call.args()[0]->type()) ||
        !ir::type_equal(b.type(), call.args()[1]->type())) {
      throw EvalError(f.plan->name + ": operands of " + ir::describe(call) + " have types " +
                      ir::type_to_string(a.type()) + " and " + ir::type_to_string(b.type()) +
                      ", expected " + ir::type_to_string(call.args()[0]->type()) + " and " +
                      ir::type_to_string(call.args()[1]->type()));
    }
    return elementwise(op, a, b, out_type);
  }

  void call_function(Frame& f, const ir::CallNode& call) {
    const ir::ExprNode* callee = call.callee().get();
    ir::Expr fn;
    std::string name;
    if (const auto* gv = ir::as<ir::GlobalVarNode>(callee)) {
      const ir::Function* found = module_.find(gv->name());
      if (found == nullptr) {
        throw EvalError(f.plan->name + ": call of @" + gv->name() + ", which is not in the module");
      }
      fn = *found;
      name = "@" + gv->name();
    } else if (ir::as<ir::FunctionNode>(callee) != nullptr) {
      fn = call.callee();
      name = f.plan->name + "/fn";
    } else {
      throw EvalError(f.plan->name + ": call of " + ir::describe(*callee) +
                      ", which is not a function");
    }
    std::vector<Value> args;
    args.reserve(call.args().size());
    // Child 0 is the callee; the arguments follow.
    for (std::size_t k = 1; k <= call.args().size(); ++k) args.push_back(kid(f, k));
    consume(f);
    // `f` may be invalidated by the push; the result is stored when the callee returns.
    push(fn, name, std::move(args));
  }

  const ir::Module& module_;
  std::vector<Frame> frames_;
  PlanCache::Entries& plans_;
  std::unordered_map<const ir::FunctionNode*, int> active_;
};

}  // namespace

std::vector<std::int64_t> broadcast_shapes(const std::vector<std::int64_t>& a,
                                           const std::vector<std::int64_t>& b) {
  const std::size_t r = std::max(a.size(), b.size());
  std::vector<std::int64_t> out(r);
  for (std::size_t k = 0; k < r; ++k) {
    const std::int64_t da = k < a.size() ? a[a.size() - 1 - k] : 1;
    const std::int64_t db = k < b.size() ? b[b.size() - 1 - k] : 1;
    if (da != db && da != 1 && db != 1) {
      throw EvalError("shapes do not broadcast: dimension " + std::to_string(da) + " vs " +
                      std::to_string(db) + " at position " + std::to_string(r - 1 - k));
    }
    out[r - 1 - k] = da == 1 ? db : da;
  }
  return out;
}

Value apply_elementwise(ir::Op op, const Value& a, const Value& b) {
  if (!ir::is_elementwise(op)) {
    throw EvalError(std::string(ir::op_name(op)) + " is not an elementwise op");
  }
  check_elementwise_operands(op, a, b);
  ir::Type out_type = ir::TypeNode::tensor(broadcast_shapes(a.type()->shape(), b.type()->shape()),
                                           a.type()->dtype());
  return elementwise(op, a, b, std::move(out_type));
}

Value evaluate(const ir::Module& module, const std::string& function,
               const std::vector<Value>& args) {
  PlanCache plans;
  return evaluate(module, function, args, plans);
}

Value run_main(const ir::Module& module, const std::vector<Value>& inputs) {
  return evaluate(module, "main", inputs);
}

Value evaluate(const ir::Module& module, const std::string& function,
               const std::vector<Value>& args, PlanCache& plans) {
  return Machine(module, plans.entries()).run(function, args);
}

Value run_main(const ir::Module& module, const std::vector<Value>& inputs, PlanCache& plans) {
  return evaluate(module, "main", inputs, plans);
}

Value evaluate_function(const ir::Module& module, const ir::Function& fn, const std::string& name,
                        const std::vector<Value>& args, PlanCache& plans) {
  return Machine(module, plans.entries()).run(fn, name, args);
}

}  // namespace aotfuzz::reference

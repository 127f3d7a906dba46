// Iterative evaluation: one precomputed post-order plan per function body, an explicit frame
// stack for calls, and per-slot use counts so intermediates die after their last use.
#include "reference/interpreter.h"

#include <bit>
#include <cassert>
#include <cfloat>
#include <cstring>
#include <deque>
#include <memory>
#include <utility>

#include "ir/node_map.h"

// The reference must be plain IEEE single precision: no fast-math, no x87 excess precision.
#ifdef __FAST_MATH__
#error "reference/interpreter.cc must not be built with -ffast-math"
#endif
static_assert(FLT_EVAL_METHOD == 0, "float arithmetic must be evaluated in float precision");
static_assert(std::endian::native == std::endian::little,
              "tensor bytes are little-endian and are accessed in place");

namespace aotfuzz::reference {
namespace {

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

constexpr std::size_t kUnknownBytes = SIZE_MAX;

// `op(a, b)` producing a tensor of `out_type` (already known to be their broadcast) of
// `out_bytes` bytes, or of checked_num_elements(out_type) elements when that is kUnknownBytes.
Value elementwise(ir::Op op, const Value& a, const Value& b, ir::Type out_type,
                  std::size_t out_bytes) {
  if (out_bytes == kUnknownBytes) {
    out_bytes = checked_num_elements(out_type) * ir::dtype_bytes(out_type->dtype());
  }
  std::vector<std::uint8_t> out(out_bytes);
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

// What a plan step does, decided once when the plan is built.
enum class StepKind : std::uint8_t {
  kParam,        // a parameter: its argument moves into the slot
  kCallee,       // a GlobalVar or Function: no runtime value, the Call resolves it
  kConstant,     // a Constant: its tensor
  kTuple,        // builds a tuple of its children
  kGetItem,      // a TupleGetItem
  kAnnotation,   // an annotation: the identity
  kElementwise,  // add, subtract or multiply
  kCall,         // a call of a global or local function
};

// One node of a function body, in post order.
struct Step {
  const ir::ExprNode* node;  // the module keeps it alive
  StepKind kind;
  ir::Op op = ir::Op::kAdd;  // kElementwise
  std::uint32_t kid_begin;   // children slots are Plan::kid_slots[kid_begin .. kid_end)
  std::uint32_t kid_end;
  std::uint32_t param = 0;  // kParam: the parameter index
  std::int32_t uses = 0;    // number of parent edges: the slot is freed after the last
  // kElementwise: the result's byte count, or kUnknownBytes when checked_num_elements refuses the
  // type (evaluation then calls it again to throw at the same point as before).
  std::size_t out_bytes = kUnknownBytes;
};

// Per-function evaluation plan: independent of the name the function is evaluated under, so one
// plan serves every evaluation of the function node.
struct Plan {
  std::vector<Step> steps;
  std::vector<std::uint32_t> kid_slots;
  std::vector<std::int32_t> uses;  // each step's Step::uses, copied as a block into a frame
  std::size_t num_params = 0;
};

// How a frame's function is named in messages: `@base`, or `base`, followed by `/fn` once per
// level of local function. Built into a string only when a message needs it.
struct Name {
  const std::string* base;
  bool global;
  std::uint32_t fn_depth = 0;

  std::string str() const {
    std::string s = global ? "@" + *base : *base;
    for (std::uint32_t i = 0; i < fn_depth; ++i) s += "/fn";
    return s;
  }
};

Step make_step(const ir::ExprNode& node) {
  Step step{&node, StepKind::kCallee, ir::Op::kAdd, 0, 0};
  switch (node.kind()) {
    case ir::ExprKind::kVar:
      step.kind = StepKind::kParam;
      break;
    case ir::ExprKind::kGlobalVar:
    case ir::ExprKind::kFunction:
      break;
    case ir::ExprKind::kConstant:
      step.kind = StepKind::kConstant;
      break;
    case ir::ExprKind::kTuple:
      step.kind = StepKind::kTuple;
      break;
    case ir::ExprKind::kTupleGetItem:
      step.kind = StepKind::kGetItem;
      break;
    case ir::ExprKind::kCall: {
      const auto& call = static_cast<const ir::CallNode&>(node);
      if (!call.op()) {
        step.kind = StepKind::kCall;
      } else if (ir::is_annotation(*call.op())) {
        step.kind = StepKind::kAnnotation;
      } else {
        step.kind = StepKind::kElementwise;
        step.op = *call.op();
        if (const auto n = num_elements_within_limit(call.type())) {
          step.out_bytes = *n * ir::dtype_bytes(call.type()->dtype());
        }
      }
      break;
    }
  }
  return step;
}

// make_plan's work lists, kept from one plan to the next (empty in between).
struct PlanScratch {
  struct Pending {
    const ir::ExprNode* node;
    std::size_t next;  // the next child to walk
    std::size_t n_kids;
  };
  std::vector<Pending> stack;
  // The slots of the children met so far of the nodes on the stack, in edge order: a child's
  // slot is pushed when the edge is followed (a finished child) or when the child finishes.
  std::vector<std::uint32_t> kids;
};

// Walks the body in the order of ir::post_order (children left to right, each node once), which
// fixes the evaluation order and so which error a bad module reports first.
Plan make_plan(const ir::FunctionNode& fn, const Name& name, PlanScratch& scratch) {
  // One map serves as the walk's seen set, the parameter table and the slot table: a node's
  // value is its slot once finished, kOnStack while its children are walked, and kParam | i for
  // parameter i not met yet.
  constexpr std::uint32_t kOnStack = UINT32_MAX;
  constexpr std::uint32_t kParam = 0x80000000u;
  Plan plan;
  const auto& params = fn.params();
  if (params.size() >= kParam) throw EvalError(name.str() + ": too many parameters");
  plan.num_params = params.size();
  ir::NodeMap<std::uint32_t> slot(32 + params.size());
  for (std::size_t i = 0; i < params.size(); ++i) {
    slot.try_emplace(params[i].get(), kParam | static_cast<std::uint32_t>(i));
  }
  auto& stack = scratch.stack;
  auto& kids = scratch.kids;
  stack.clear();
  kids.clear();
  plan.steps.reserve(64);
  plan.kid_slots.reserve(128);
  auto walk = [&](const ir::ExprNode* node) {
    auto [value, inserted] = slot.try_emplace(node, kOnStack);
    if (inserted || (*value != kOnStack && (*value & kParam) != 0)) {
      stack.push_back({node, 0, ir::num_children(*node)});
    } else {
      kids.push_back(*value);  // finished: nothing is on the stack twice (the graph is acyclic)
    }
  };
  walk(fn.body().get());
  while (!stack.empty()) {
    auto& top = stack.back();
    const ir::ExprNode& node = *top.node;
    const std::size_t n_kids = top.n_kids;
    if (top.next < n_kids) {
      walk(ir::child(node, top.next++).get());
      continue;
    }
    stack.pop_back();
    if (plan.steps.size() >= kParam) throw EvalError(name.str() + ": function body too large");
    Step step = make_step(node);
    step.kid_begin = static_cast<std::uint32_t>(plan.kid_slots.size());
    const auto first = kids.end() - static_cast<std::ptrdiff_t>(n_kids);
    for (auto it = first; it != kids.end(); ++it) ++plan.steps[*it].uses;
    plan.kid_slots.insert(plan.kid_slots.end(), first, kids.end());
    kids.erase(first, kids.end());
    step.kid_end = static_cast<std::uint32_t>(plan.kid_slots.size());
    std::uint32_t& mine = *slot.find(&node);
    if (step.kind == StepKind::kParam) {
      if (mine == kOnStack) {
        throw EvalError(name.str() + ": variable " + ir::describe(node) +
                        " is not a parameter of this function");
      }
      step.param = mine & ~kParam;
    }
    mine = static_cast<std::uint32_t>(plan.steps.size());
    kids.push_back(mine);
    plan.steps.push_back(step);
  }
  plan.uses.reserve(plan.steps.size());
  for (const Step& step : plan.steps) plan.uses.push_back(step.uses);
  return plan;
}

void check_args(const Name& name, const ir::FunctionNode& fn, const Value* args,
                std::size_t n_args) {
  const auto& params = fn.params();
  if (params.size() != n_args) {
    throw EvalError(name.str() + " takes " + std::to_string(params.size()) + " arguments, got " +
                    std::to_string(n_args));
  }
  for (std::size_t i = 0; i < n_args; ++i) {
    if (args[i].empty() || !ir::type_equal(params[i]->type(), args[i].type())) {
      throw EvalError(name.str() + " argument " + std::to_string(i) + " (%" + params[i]->name() +
                      "): expected " + ir::type_to_string(params[i]->type()) + ", got " +
                      (args[i].empty() ? "<empty>" : ir::type_to_string(args[i].type())));
    }
  }
}

struct Entry;

// A call being evaluated. Its arguments and slots live on the machine's value stack: arguments at
// [base, base + num_params), then one slot per step.
struct Frame {
  const Plan* plan;
  Entry* entry;
  Name name;
  std::size_t base;
  std::size_t slots;  // base + the number of parameters: where step 0's value is
  std::size_t pc = 0;
};

struct Entry {
  ir::Expr keep;  // the planned function (its nodes must outlive the plan)
  Plan plan;
  bool active = false;  // on the frame stack of the running evaluation (recursion check)
};

}  // namespace

struct PlanCache::Entries {
  // Entries by function node; a deque so an entry stays put while others are added.
  ir::NodeMap<Entry*> by_function;
  std::deque<Entry> entries;
  // The running evaluation's stacks, kept so later evaluations reuse their memory. Empty
  // between evaluations.
  std::vector<Frame> frames;
  std::vector<Value> values;
  std::vector<std::int32_t> uses;
  PlanScratch plan_scratch;
};

PlanCache::PlanCache() : entries_(std::make_unique<Entries>()) {}
PlanCache::~PlanCache() = default;

namespace {

class Machine {
 public:
  Machine(const ir::Module& module, PlanCache::Entries& plans)
      : module_(module),
        plans_(plans),
        frames_(plans.frames),
        values_(plans.values),
        uses_(plans.uses) {
    // The stacks belong to one evaluation at a time: a nested Machine on the same cache would
    // clear the outer one's frames when it ends.
    assert(frames_.empty() && "one evaluation at a time per PlanCache");
  }

  // Leaves the cache's stacks empty and no function active, also after an exception.
  ~Machine() {
    for (Frame& f : frames_) f.entry->active = false;
    frames_.clear();
    values_.clear();
    uses_.clear();
  }

  Machine(const Machine&) = delete;
  Machine& operator=(const Machine&) = delete;

  Value run(const std::string& function, const std::vector<Value>& args) {
    const ir::Function* fn = module_.find(function);
    if (fn == nullptr) throw EvalError("no function @" + function + " in the module");
    return run(*fn, Name{&function, true}, args);
  }

  Value run(const ir::Function& fn, const Name& name, const std::vector<Value>& args) {
    const std::size_t base = values_.size();
    values_.insert(values_.end(), args.begin(), args.end());
    push(fn, name, base);
    for (;;) {
      Frame& f = frames_.back();
      const Plan& plan = *f.plan;
      if (f.pc == plan.steps.size()) {
        Value result = std::move(values_.back());
        f.entry->active = false;
        values_.resize(f.base);
        uses_.resize(f.base);
        frames_.pop_back();
        if (frames_.empty()) return result;
        Frame& caller = frames_.back();
        const ir::ExprNode* call = caller.plan->steps[caller.pc].node;
        if (!ir::type_equal(result.type(), call->type())) {
          throw EvalError(caller.name.str() + ": " + ir::describe(*call) +
                          " expects a result of type " + ir::type_to_string(call->type()) +
                          ", the callee returned " + ir::type_to_string(result.type()));
        }
        values_[slot_index(caller, caller.pc++)] = std::move(result);
        continue;
      }
      step(f);
    }
  }

 private:
  static std::size_t slot_index(const Frame& f, std::size_t step) { return f.slots + step; }

  // `keep` is the function to call (an ir::Function or an ir::Expr holding a FunctionNode); its
  // arguments are values_[base...]. A template so no shared_ptr is converted unless planned.
  template <class FunctionPtr>
  void push(const FunctionPtr& keep, const Name& name, std::size_t base) {
    const auto& fn = static_cast<const ir::FunctionNode&>(*keep);
    check_args(name, fn, values_.data() + base, values_.size() - base);
    Entry** found = plans_.by_function.find(&fn);
    Entry* entry = found != nullptr ? *found : nullptr;
    if (entry != nullptr && entry->active) throw EvalError("recursive call of " + name.str());
    if (entry == nullptr) {
      Plan plan = make_plan(fn, name, plans_.plan_scratch);
      entry = &plans_.entries.emplace_back(Entry{ir::Expr(keep), std::move(plan)});
      plans_.by_function.try_emplace(&fn, entry);
    }
    const Plan& plan = entry->plan;
    // One uses_ entry per value so both stacks share indices; arguments have none.
    values_.resize(base + plan.num_params + plan.steps.size());
    uses_.resize(base + plan.num_params);
    uses_.insert(uses_.end(), plan.uses.begin(), plan.uses.end());
    frames_.push_back(Frame{&plan, entry, name, base, base + plan.num_params, 0});
    // Only once the frame exists: ~Machine clears the flags of its frames, so a throw above must
    // not leave the function marked as being evaluated.
    entry->active = true;
  }

  // Drops one use of each child of the current step, freeing values no longer needed.
  void consume(const Frame& f, const Step& step) {
    const std::size_t slots = f.slots;
    for (std::uint32_t k = step.kid_begin; k < step.kid_end; ++k) {
      const std::size_t s = slots + f.plan->kid_slots[k];
      if (--uses_[s] == 0) values_[s] = Value();
    }
  }

  [[noreturn]] void no_value(const Frame& f, std::size_t k) const {
    throw EvalError(f.name.str() + ": operand " + std::to_string(k) + " of " +
                    ir::describe(*f.plan->steps[f.pc].node) +
                    " has no value (a function used as a value?)");
  }

  const Value& kid(const Frame& f, const Step& step, std::size_t k) const {
    const Value& v = values_[slot_index(f, f.plan->kid_slots[step.kid_begin + k])];
    if (v.empty()) no_value(f, k);
    return v;
  }

  // Child k's value, dropping its use: moved out on the last use, copied otherwise.
  Value take(const Frame& f, const Step& step, std::size_t k) {
    const std::size_t s = slot_index(f, f.plan->kid_slots[step.kid_begin + k]);
    if (values_[s].empty()) no_value(f, k);
    return --uses_[s] == 0 ? std::move(values_[s]) : values_[s];
  }

  // Evaluates the step at f.pc; advances pc unless it pushed a call frame. Results go straight
  // into the step's slot, values_[at] (no step but a call grows values_).
  void step(Frame& f) {
    const Plan& plan = *f.plan;
    const Step& step = plan.steps[f.pc];
    const std::size_t at = slot_index(f, f.pc);
    switch (step.kind) {
      case StepKind::kParam:
        // Each Var is one step, run once per frame: the argument can move into its slot.
        values_[at] = std::move(values_[f.base + step.param]);
        break;
      case StepKind::kCallee:
        break;  // no children, nothing to consume
      case StepKind::kConstant: {
        const auto& c = static_cast<const ir::ConstantNode&>(*step.node);
        values_[at] = constant_value(c.type(), c.values());
        break;
      }
      case StepKind::kTuple: {
        std::vector<Value> fields;
        fields.reserve(step.kid_end - step.kid_begin);
        for (std::size_t k = 0; k < step.kid_end - step.kid_begin; ++k) {
          fields.push_back(take(f, step, k));
        }
        values_[at] = Value::tuple(std::move(fields), step.node->type());
        ++f.pc;
        return;
      }
      case StepKind::kGetItem: {
        const auto& get = static_cast<const ir::TupleGetItemNode&>(*step.node);
        const Value& t = kid(f, step, 0);
        if (!t.is_tuple() || get.index() < 0 ||
            static_cast<std::size_t>(get.index()) >= t.fields().size()) {
          throw EvalError(f.name.str() + ": " + ir::describe(get) + " applied to a value of type " +
                          ir::type_to_string(t.type()));
        }
        values_[at] = t.fields()[static_cast<std::size_t>(get.index())];
        break;
      }
      case StepKind::kAnnotation:
        values_[at] = take(f, step, 0);
        ++f.pc;
        return;
      case StepKind::kElementwise:
        values_[at] = apply_op(f, step);
        break;
      case StepKind::kCall:
        call_function(f, step);
        return;
    }
    consume(f, step);
    ++f.pc;
  }

  Value apply_op(const Frame& f, const Step& step) {
    const auto& call = static_cast<const ir::CallNode&>(*step.node);
    const ir::Op op = step.op;
    const Value& a = kid(f, step, 0);
    const Value& b = kid(f, step, 1);
    check_elementwise_operands(op, a, b);
    // The node's type is the broadcast of its operand types; the values must have those types.
    if (!ir::type_equal(a.type(), call.args()[0]->type()) ||
        !ir::type_equal(b.type(), call.args()[1]->type())) {
      throw EvalError(f.name.str() + ": operands of " + ir::describe(call) + " have types " +
                      ir::type_to_string(a.type()) + " and " + ir::type_to_string(b.type()) +
                      ", expected " + ir::type_to_string(call.args()[0]->type()) + " and " +
                      ir::type_to_string(call.args()[1]->type()));
    }
    return elementwise(op, a, b, call.type(), step.out_bytes);
  }

  void call_function(Frame& f, const Step& step) {
    const auto& call = static_cast<const ir::CallNode&>(*step.node);
    const ir::ExprNode* callee = call.callee().get();
    const ir::Function* global = nullptr;
    Name name = f.name;
    if (const auto* gv = ir::as<ir::GlobalVarNode>(callee)) {
      global = module_.find(gv->name());
      if (global == nullptr) {
        throw EvalError(f.name.str() + ": call of @" + gv->name() + ", which is not in the module");
      }
      name = Name{&gv->name(), true};
    } else if (ir::as<ir::FunctionNode>(callee) != nullptr) {
      ++name.fn_depth;
    } else {
      throw EvalError(f.name.str() + ": call of " + ir::describe(*callee) +
                      ", which is not a function");
    }
    // The callee's arguments go on top of the value stack. Child 0 is the callee; the arguments
    // follow. `f`, `step` and any reference into values_ may be invalidated by the growth.
    const std::size_t base = values_.size();
    const std::size_t n_args = call.args().size();
    const Frame& caller = f;
    for (std::size_t k = 1; k <= n_args; ++k) {
      Value v = take(caller, step, k);
      values_.push_back(std::move(v));
    }
    consume_callee(f, step);
    // The result is stored when the callee returns.
    if (global != nullptr) {
      push(*global, name, base);
    } else {
      push(call.callee(), name, base);
    }
  }

  // The callee's use (child 0), after take() dropped the arguments' uses.
  void consume_callee(const Frame& f, const Step& step) {
    const std::size_t s = slot_index(f, f.plan->kid_slots[step.kid_begin]);
    if (--uses_[s] == 0) values_[s] = Value();
  }

  const ir::Module& module_;
  PlanCache::Entries& plans_;
  std::vector<Frame>& frames_;
  std::vector<Value>& values_;
  std::vector<std::int32_t>& uses_;
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
  Machine machine(module, plans.entries());
  return machine.run(function, args);
}

Value run_main(const ir::Module& module, const std::vector<Value>& inputs, PlanCache& plans) {
  return evaluate(module, "main", inputs, plans);
}

Value evaluate_function(const ir::Module& module, const ir::Function& fn, const std::string& name,
                        const std::vector<Value>& args, PlanCache& plans) {
  Machine machine(module, plans.entries());
  return machine.run(fn, Name{&name, false}, args);
}

}  // namespace aotfuzz::reference

// Expression construction with eager type checking.
#include "ir/expr.h"

#include <algorithm>

#include "ir/error.h"
#include "ir/node_map.h"

namespace aotfuzz::ir {
namespace {

std::string shape_str(const Type& t) { return type_to_string(t); }

// NumPy broadcasting of two tensor types of one dtype.
Type broadcast(Op op, const Type& a, const Type& b) {
  // Built only for a message: this runs for every op node made.
  auto name = [op] { return std::string(op_name(op)); };
  if (!a->is_tensor() || !b->is_tensor()) {
    throw TypeError(name() + " expects tensors, got " + shape_str(a) + " and " + shape_str(b));
  }
  if (a->dtype() != b->dtype()) {
    throw TypeError(name() + ": dtype mismatch " + shape_str(a) + " vs " + shape_str(b));
  }
  const auto& sa = a->shape();
  const auto& sb = b->shape();
  // Most ops combine equal shapes: share the operand's type instead of allocating a new one.
  if (sa == sb) return a;
  std::size_t rank = std::max(sa.size(), sb.size());
  std::vector<std::int64_t> out(rank);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t da = i < rank - sa.size() ? 1 : sa[i - (rank - sa.size())];
    std::int64_t db = i < rank - sb.size() ? 1 : sb[i - (rank - sb.size())];
    if (da != db && da != 1 && db != 1) {
      throw TypeError(name() + ": shapes " + shape_str(a) + " and " + shape_str(b) +
                      " do not broadcast (dimension " + std::to_string(i) + ")");
    }
    out[i] = da == 1 ? db : da;
  }
  if (out == sb) return b;
  if (out == sa) return a;
  return TypeNode::tensor(std::move(out), a->dtype());
}

void check_args_nonnull(const std::vector<Expr>& args, std::string_view what) {
  for (const auto& a : args) {
    if (!a) throw TypeError(std::string(what) + ": null argument");
  }
}

}  // namespace

std::string_view op_name(Op op) {
  switch (op) {
    case Op::kAdd:
      return "add";
    case Op::kSubtract:
      return "subtract";
    case Op::kMultiply:
      return "multiply";
    case Op::kCompilerBegin:
      return "annotation.compiler_begin";
    case Op::kCompilerEnd:
      return "annotation.compiler_end";
  }
  return "?";
}

const std::vector<Op>& all_ops() {
  static const std::vector<Op> kOps = {Op::kAdd, Op::kSubtract, Op::kMultiply, Op::kCompilerBegin,
                                       Op::kCompilerEnd};
  return kOps;
}

std::optional<Op> parse_op(std::string_view name) {
  for (Op op : all_ops()) {
    if (op_name(op) == name) return op;
  }
  return std::nullopt;
}

bool is_elementwise(Op op) { return op == Op::kAdd || op == Op::kSubtract || op == Op::kMultiply; }
bool is_annotation(Op op) { return op == Op::kCompilerBegin || op == Op::kCompilerEnd; }

Attrs::Attrs(std::initializer_list<std::pair<std::string, AttrValue>> entries)
    : entries_(entries) {}

Attrs Attrs::with(std::string key, AttrValue value) const {
  Attrs out = *this;
  for (auto& [k, v] : out.entries_) {
    if (k == key) {
      v = std::move(value);
      return out;
    }
  }
  out.entries_.emplace_back(std::move(key), std::move(value));
  return out;
}

bool Attrs::has(std::string_view key) const { return find(key) != nullptr; }

const AttrValue* Attrs::find(std::string_view key) const {
  for (const auto& [k, v] : entries_) {
    if (k == key) return &v;
  }
  return nullptr;
}

std::optional<std::string> Attrs::get_string(std::string_view key) const {
  const AttrValue* v = find(key);
  if (v == nullptr || !std::holds_alternative<std::string>(*v)) return std::nullopt;
  return std::get<std::string>(*v);
}

const std::string* Attrs::find_string(std::string_view key) const {
  const AttrValue* v = find(key);
  return v != nullptr ? std::get_if<std::string>(v) : nullptr;
}

std::optional<std::int64_t> Attrs::get_int(std::string_view key) const {
  const AttrValue* v = find(key);
  if (v == nullptr || !std::holds_alternative<std::int64_t>(*v)) return std::nullopt;
  return std::get<std::int64_t>(*v);
}

void ExprNode::release(std::vector<Expr>& kids) {
  // Moving the vector hands its buffer to the stack: no allocation for a node's own kids.
  std::vector<Expr> stack = std::move(kids);
  kids.clear();
  while (!stack.empty()) {
    Expr e = std::move(stack.back());
    stack.pop_back();
    // Sole owner: take the grandchildren first so `e` dies without recursing.
    if (e && e.use_count() == 1) e->steal_children(stack);
  }
}

void ExprNode::release(Expr& kid) {
  if (!kid) return;  // an op call's callee
  std::vector<Expr> one;
  one.push_back(std::move(kid));
  release(one);
}

void CallNode::steal_children(std::vector<Expr>& out) const {
  for (auto& a : args_) out.push_back(std::move(a));
  args_.clear();
  if (callee_) out.push_back(std::move(callee_));
}
void TupleNode::steal_children(std::vector<Expr>& out) const {
  for (auto& f : fields_) out.push_back(std::move(f));
  fields_.clear();
}
void TupleGetItemNode::steal_children(std::vector<Expr>& out) const {
  out.push_back(std::move(tuple_));
}
void FunctionNode::steal_children(std::vector<Expr>& out) const { out.push_back(std::move(body_)); }

Var VarNode::make(std::string name, Type type) {
  if (!type) throw TypeError("variable %" + name + " has no type");
  if (type->is_func()) throw TypeError("variable %" + name + " has a function type");
  return std::make_shared<VarNode>(Key(), std::move(name), std::move(type));
}

GlobalVar GlobalVarNode::make(std::string name, Type func_type) {
  if (!func_type || !func_type->is_func()) {
    throw TypeError("@" + name + " must have a function type");
  }
  return std::make_shared<GlobalVarNode>(Key(), std::move(name), std::move(func_type));
}

bool constant_value_fits(DType dtype, std::int64_t v) {
  switch (dtype) {
    case DType::kInt8:
      return v >= -128 && v <= 127;
    case DType::kInt32:
      return v >= INT32_MIN && v <= INT32_MAX;
    case DType::kFloat32:
      return v >= -(std::int64_t{1} << 24) && v <= (std::int64_t{1} << 24);
  }
  return false;
}

Constant ConstantNode::make(Type tensor_type, std::vector<std::int64_t> values) {
  if (!tensor_type || !tensor_type->is_tensor()) {
    throw TypeError("a constant must have a tensor type");
  }
  const std::int64_t n = tensor_type->num_elements();
  if (static_cast<std::int64_t>(values.size()) != n) {
    throw TypeError("constant of type " + type_to_string(tensor_type) + " needs " +
                    std::to_string(n) + " values, got " + std::to_string(values.size()));
  }
  for (std::int64_t v : values) {
    if (!constant_value_fits(tensor_type->dtype(), v)) {
      throw TypeError("constant value " + std::to_string(v) + " is not an exact " +
                      std::string(dtype_name(tensor_type->dtype())));
    }
  }
  return std::make_shared<ConstantNode>(Key(), std::move(tensor_type), std::move(values));
}

Call CallNode::make(Op op, std::vector<Expr> args, Attrs attrs) {
  auto name = [op] { return std::string(op_name(op)); };
  check_args_nonnull(args, op_name(op));
  Type type;
  if (is_annotation(op)) {
    if (args.size() != 1) {
      throw TypeError(name() + " takes 1 argument, got " + std::to_string(args.size()));
    }
    const std::string* target = attrs.find_string("compiler");
    if (attrs.entries().size() != 1 || target == nullptr) {
      throw TypeError(name() + " needs exactly one attribute, compiler=\"<target>\"");
    }
    if (target->empty()) throw TypeError(name() + ": empty compiler name");
    if (args[0]->type()->is_func()) throw TypeError(name() + " of a function");
    type = args[0]->type();
  } else {
    if (args.size() != 2) {
      throw TypeError(name() + " takes 2 arguments, got " + std::to_string(args.size()));
    }
    if (!attrs.empty()) throw TypeError(name() + " takes no attributes");
    type = broadcast(op, args[0]->type(), args[1]->type());
  }
  return std::make_shared<CallNode>(Key(), std::move(type), op, nullptr, std::move(args),
                                    std::move(attrs));
}

Call CallNode::make(Expr callee, std::vector<Expr> args) {
  if (!callee) throw TypeError("call of a null callee");
  if (callee->kind() != ExprKind::kGlobalVar && callee->kind() != ExprKind::kFunction) {
    throw TypeError("callee " + describe(*callee) + " is not a function");
  }
  for (const auto& a : args) {
    if (!a) throw TypeError(describe(*callee) + ": null argument");
  }
  const Type& ft = callee->type();
  if (ft->fields().size() != args.size()) {
    throw TypeError(describe(*callee) + " takes " + std::to_string(ft->fields().size()) +
                    " arguments, got " + std::to_string(args.size()));
  }
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (!type_equal(ft->fields()[i], args[i]->type())) {
      throw TypeError(describe(*callee) + " argument " + std::to_string(i) + ": expected " +
                      type_to_string(ft->fields()[i]) + ", got " + type_to_string(args[i]->type()));
    }
  }
  return std::make_shared<CallNode>(Key(), ft->ret(), std::nullopt, std::move(callee),
                                    std::move(args), Attrs{});
}

std::shared_ptr<const TupleNode> TupleNode::make(std::vector<Expr> fields) {
  check_args_nonnull(fields, "tuple");
  std::vector<Type> types;
  types.reserve(fields.size());
  for (const auto& f : fields) {
    if (f->type()->is_func()) throw TypeError("tuple field of function type");
    types.push_back(f->type());
  }
  return std::make_shared<TupleNode>(Key(), TypeNode::tuple(std::move(types)), std::move(fields));
}

std::shared_ptr<const TupleGetItemNode> TupleGetItemNode::make(Expr tuple, int index) {
  if (!tuple) throw TypeError("tuple index of a null expression");
  const Type& t = tuple->type();
  if (!t->is_tuple()) {
    throw TypeError("." + std::to_string(index) + " applied to non-tuple " + describe(*tuple) +
                    " of type " + type_to_string(t));
  }
  if (index < 0 || static_cast<std::size_t>(index) >= t->fields().size()) {
    throw TypeError("tuple index " + std::to_string(index) + " out of range for " +
                    type_to_string(t));
  }
  Type ft = t->fields()[index];
  return std::make_shared<TupleGetItemNode>(Key(), std::move(ft), std::move(tuple), index);
}

Function FunctionNode::make(std::vector<Var> params, Expr body, Attrs attrs, Type ret_type) {
  if (!body) throw TypeError("function without a body");
  std::vector<Type> ptypes;
  ptypes.reserve(params.size());
  // Short lists (nearly all) are scanned for repeats, long ones go through a set.
  const bool many = params.size() > 16;
  NodeSet seen(many ? params.size() : 0);
  for (std::size_t i = 0; i < params.size(); ++i) {
    const Var& p = params[i];
    if (!p) throw TypeError("null function parameter");
    const bool repeat =
        many ? !seen.insert(p.get())
             : std::find(params.begin(), params.begin() + i, p) != params.begin() + i;
    if (repeat) throw TypeError("parameter %" + p->name() + " bound twice");
    ptypes.push_back(p->type());
  }
  if (body->type()->is_func()) throw TypeError("function returning a function");
  if (ret_type && !type_equal(ret_type, body->type())) {
    throw TypeError("function declared to return " + type_to_string(ret_type) +
                    " but its body has type " + type_to_string(body->type()));
  }
  Type ft = TypeNode::func(std::move(ptypes), body->type());
  return std::make_shared<FunctionNode>(Key(), std::move(ft), std::move(params), std::move(body),
                                        std::move(attrs));
}

Expr compiler_begin(Expr e, const std::string& target) {
  return CallNode::make(Op::kCompilerBegin, {std::move(e)}, Attrs{{"compiler", target}});
}

Expr compiler_end(Expr e, const std::string& target) {
  return CallNode::make(Op::kCompilerEnd, {std::move(e)}, Attrs{{"compiler", target}});
}

std::optional<std::string> annotation_target(const ExprNode* node) {
  const auto* call = as<CallNode>(node);
  if (call == nullptr || !call->op() || !is_annotation(*call->op())) return std::nullopt;
  return call->attrs().get_string("compiler");
}

std::vector<Expr> children(const ExprNode& node) {
  switch (node.kind()) {
    case ExprKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      std::vector<Expr> out;
      out.reserve(call.args().size() + 1);
      if (call.callee()) out.push_back(call.callee());
      out.insert(out.end(), call.args().begin(), call.args().end());
      return out;
    }
    case ExprKind::kTuple:
      return static_cast<const TupleNode&>(node).fields();
    case ExprKind::kTupleGetItem:
      return {static_cast<const TupleGetItemNode&>(node).tuple()};
    default:
      return {};
  }
}

Expr with_children(const Expr& node, std::vector<Expr> kids) {
  const std::size_t n = num_children(*node);
  if (n != kids.size()) {
    throw TypeError("with_children: " + describe(*node) + " has " + std::to_string(n) +
                    " children, got " + std::to_string(kids.size()));
  }
  bool same = true;
  for (std::size_t i = 0; i < n && same; ++i) same = child(*node, i) == kids[i];
  if (same) return node;
  switch (node->kind()) {
    case ExprKind::kCall: {
      const auto& call = static_cast<const CallNode&>(*node);
      if (call.op()) return CallNode::make(*call.op(), std::move(kids), call.attrs());
      Expr callee = kids.front();
      kids.erase(kids.begin());
      return CallNode::make(std::move(callee), std::move(kids));
    }
    case ExprKind::kTuple:
      return TupleNode::make(std::move(kids));
    case ExprKind::kTupleGetItem:
      return TupleGetItemNode::make(kids[0], static_cast<const TupleGetItemNode&>(*node).index());
    default:
      return node;
  }
}

std::string describe(const ExprNode& node) {
  switch (node.kind()) {
    case ExprKind::kVar:
      return "%" + static_cast<const VarNode&>(node).name();
    case ExprKind::kGlobalVar:
      return "@" + static_cast<const GlobalVarNode&>(node).name();
    case ExprKind::kConstant:
      return "const(" + type_to_string(node.type()) + ")";
    case ExprKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      std::string head = call.op() ? std::string(op_name(*call.op())) : describe(*call.callee());
      std::string out = head + "(";
      for (std::size_t i = 0; i < call.args().size(); ++i) {
        if (i) out += ", ";
        const auto& a = *call.args()[i];
        out += a.kind() == ExprKind::kVar ? describe(a) : "...";
      }
      out += ")";
      if (auto t = call.attrs().get_string("compiler")) out += " [" + *t + "]";
      return out;
    }
    case ExprKind::kTuple:
      return "tuple of " + std::to_string(static_cast<const TupleNode&>(node).fields().size());
    case ExprKind::kTupleGetItem:
      return "tuple_get_item ." +
             std::to_string(static_cast<const TupleGetItemNode&>(node).index());
    case ExprKind::kFunction:
      return "fn";
  }
  return "?";
}

}  // namespace aotfuzz::ir

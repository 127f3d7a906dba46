// Immutable expression nodes. Every node is typed at construction: building an ill-typed node
// throws ir::TypeError, so a node that exists is well typed.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "ir/type.h"

namespace aotfuzz::ir {

enum class ExprKind : std::uint8_t {
  kVar,
  kGlobalVar,
  kConstant,
  kCall,
  kTuple,
  kTupleGetItem,
  kFunction
};

/// Primitive operators. Elementwise ops broadcast like NumPy; annotations are identities.
enum class Op : std::uint8_t { kAdd, kSubtract, kMultiply, kCompilerBegin, kCompilerEnd };

/// Relay spelling: "add", "annotation.compiler_begin", ...
std::string_view op_name(Op op);
std::optional<Op> parse_op(std::string_view name);
bool is_elementwise(Op op);
bool is_annotation(Op op);
/// Every op, in enum order (for tables, generators and tests).
const std::vector<Op>& all_ops();

/// An attribute value: integers and strings are all the subset needs.
using AttrValue = std::variant<std::int64_t, std::string>;

/// Ordered key/value attributes (order is kept because the text form prints it).
class Attrs {
 public:
  Attrs() = default;
  Attrs(std::initializer_list<std::pair<std::string, AttrValue>> entries);
  /// Returns a copy with `key` set (replaced in place if present, else appended).
  Attrs with(std::string key, AttrValue value) const;
  bool has(std::string_view key) const;
  const AttrValue* find(std::string_view key) const;
  std::optional<std::string> get_string(std::string_view key) const;
  /// The string value of `key` without copying it, or nullptr.
  const std::string* find_string(std::string_view key) const;
  std::optional<std::int64_t> get_int(std::string_view key) const;
  const std::vector<std::pair<std::string, AttrValue>>& entries() const { return entries_; }
  bool empty() const { return entries_.empty(); }
  friend bool operator==(const Attrs& a, const Attrs& b) { return a.entries_ == b.entries_; }

 private:
  std::vector<std::pair<std::string, AttrValue>> entries_;
};

class ExprNode;
/// Expressions are shared and immutable; identity (the pointer) distinguishes variables.
using Expr = std::shared_ptr<const ExprNode>;

/// Common base: a kind tag and the type computed at construction.
class ExprNode {
 public:
  /// Releases the children iteratively, so dropping a 1,000,000-node chain cannot overflow.
  virtual ~ExprNode() = default;
  ExprKind kind() const { return kind_; }
  const Type& type() const { return type_; }

 protected:
  /// A tag only node classes can make: their constructors are public so that std::make_shared
  /// (one allocation for node and count) can call them, yet nothing else can.
  struct Key {
    explicit Key() = default;
  };
  ExprNode(ExprKind kind, Type type) : kind_(kind), type_(std::move(type)) {}
  /// Moves this node's child pointers into `out`; only called on a node about to die.
  virtual void steal_children(std::vector<Expr>& out) const {}
  /// Destroys `kids`, flattening deep ownership chains into a loop.
  static void release(std::vector<Expr>& kids);
  static void release(Expr& kid);

 private:
  ExprKind kind_;
  Type type_;
};

/// Checked downcast: the node as T if its kind matches, else nullptr.
template <class T>
const T* as(const ExprNode* node) {
  return node != nullptr && node->kind() == T::kKind ? static_cast<const T*>(node) : nullptr;
}
template <class T>
const T* as(const Expr& node) {
  return as<T>(node.get());
}
/// Shared-pointer downcast (nullptr when the kind does not match).
template <class T>
std::shared_ptr<const T> as_ptr(const Expr& node) {
  return as<T>(node) != nullptr ? std::static_pointer_cast<const T>(node) : nullptr;
}

/// A function parameter. Its name is a hint; identity is the node.
class VarNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kVar;
  static std::shared_ptr<const VarNode> make(std::string name, Type type);
  const std::string& name() const { return name_; }

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  VarNode(Key, std::string name, Type type)
      : ExprNode(kKind, std::move(type)), name_(std::move(name)) {}

 private:
  std::string name_;
};
using Var = std::shared_ptr<const VarNode>;

/// A reference to a module-level function by name; its type is that function's type.
class GlobalVarNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kGlobalVar;
  /// Throws TypeError unless `func_type` is a function type.
  static std::shared_ptr<const GlobalVarNode> make(std::string name, Type func_type);
  const std::string& name() const { return name_; }

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  GlobalVarNode(Key, std::string name, Type type)
      : ExprNode(kKind, std::move(type)), name_(std::move(name)) {}

 private:
  std::string name_;
};
using GlobalVar = std::shared_ptr<const GlobalVarNode>;

/// A constant tensor (Relay's `Constant`). Its elements are integers, each exactly
/// representable in the dtype (an int8 in [-128, 127], an int32, a float32 of magnitude at most
/// 2^24), so the text form, the interpreter and every C compiler agree on them bit for bit.
class ConstantNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kConstant;
  /// Throws TypeError unless `tensor_type` is a tensor type, `values` has one entry per element
  /// and every value is representable (see above).
  static std::shared_ptr<const ConstantNode> make(Type tensor_type,
                                                  std::vector<std::int64_t> values);
  /// The elements, row-major.
  const std::vector<std::int64_t>& values() const { return values_; }
  /// Rank 0: TVM's FuseOps fuses a scalar float32 or int32 constant into its consumer.
  bool is_scalar() const { return type()->shape().empty(); }

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  ConstantNode(Key, Type type, std::vector<std::int64_t> values)
      : ExprNode(kKind, std::move(type)), values_(std::move(values)) {}

 private:
  std::vector<std::int64_t> values_;
};
using Constant = std::shared_ptr<const ConstantNode>;

/// Whether `v` is an exact element of `dtype` in a Constant.
bool constant_value_fits(DType dtype, std::int64_t v);

/// A call of a primitive op, a global function or a local function.
class CallNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kCall;
  /// Op call. Annotations need exactly one argument and a string attribute `compiler`.
  static std::shared_ptr<const CallNode> make(Op op, std::vector<Expr> args, Attrs attrs = {});
  /// Call of a GlobalVar or a Function; argument types must equal parameter types.
  static std::shared_ptr<const CallNode> make(Expr callee, std::vector<Expr> args);
  ~CallNode() override {
    release(args_);
    release(callee_);
  }

  /// The op, when this calls an op.
  std::optional<Op> op() const { return op_; }
  bool is_op(Op op) const { return op_ == op; }
  /// The callee expression (GlobalVar or Function), null for op calls.
  const Expr& callee() const { return callee_; }
  const std::vector<Expr>& args() const { return args_; }
  const Attrs& attrs() const { return attrs_; }

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  CallNode(Key, Type type, std::optional<Op> op, Expr callee, std::vector<Expr> args, Attrs attrs)
      : ExprNode(kKind, std::move(type)),
        op_(op),
        callee_(std::move(callee)),
        args_(std::move(args)),
        attrs_(std::move(attrs)) {}

 private:
  void steal_children(std::vector<Expr>& out) const override;
  std::optional<Op> op_;
  mutable Expr callee_;
  mutable std::vector<Expr> args_;
  Attrs attrs_;
};
using Call = std::shared_ptr<const CallNode>;

/// A tuple of values (fields may themselves be tuples).
class TupleNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTuple;
  static std::shared_ptr<const TupleNode> make(std::vector<Expr> fields);
  ~TupleNode() override { release(fields_); }
  const std::vector<Expr>& fields() const { return fields_; }

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  TupleNode(Key, Type type, std::vector<Expr> fields)
      : ExprNode(kKind, std::move(type)), fields_(std::move(fields)) {}

 private:
  void steal_children(std::vector<Expr>& out) const override;
  mutable std::vector<Expr> fields_;
};

/// `tuple.index`; throws TypeError on a non-tuple or an index out of range.
class TupleGetItemNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kTupleGetItem;
  static std::shared_ptr<const TupleGetItemNode> make(Expr tuple, int index);
  ~TupleGetItemNode() override { release(tuple_); }
  const Expr& tuple() const { return tuple_; }
  int index() const { return index_; }

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  TupleGetItemNode(Key, Type type, Expr tuple, int index)
      : ExprNode(kKind, std::move(type)), tuple_(std::move(tuple)), index_(index) {}

 private:
  void steal_children(std::vector<Expr>& out) const override;
  mutable Expr tuple_;
  int index_;
};

/// A function: global (in a Module) or local (FuseOps' primitive functions).
class FunctionNode final : public ExprNode {
 public:
  static constexpr ExprKind kKind = ExprKind::kFunction;
  /// Throws TypeError if `ret_type` is given and differs from the body's type.
  static std::shared_ptr<const FunctionNode> make(std::vector<Var> params, Expr body,
                                                  Attrs attrs = {}, Type ret_type = nullptr);
  ~FunctionNode() override { release(body_); }
  const std::vector<Var>& params() const { return params_; }
  const Expr& body() const { return body_; }
  const Attrs& attrs() const { return attrs_; }
  const Type& ret_type() const { return type()->ret(); }
  /// post_order(body()): computed on first use and kept, since verify(), the interpreters and
  /// the code generator all walk the same bodies again and again. Safe to call from threads.
  const std::vector<Expr>& body_order() const;

 public:
  /// Only make() can call this: Key is ExprNode's. (Public for std::make_shared.)
  FunctionNode(Key, Type type, std::vector<Var> params, Expr body, Attrs attrs)
      : ExprNode(kKind, std::move(type)),
        params_(std::move(params)),
        body_(std::move(body)),
        attrs_(std::move(attrs)) {}

 private:
  void steal_children(std::vector<Expr>& out) const override;
  std::vector<Var> params_;
  mutable Expr body_;
  Attrs attrs_;
  // The walk only adds references to nodes `body_` already holds, so it creates no cycle, and
  // dropping it destroys nothing by itself (see release()).
  mutable std::once_flag order_once_;
  mutable std::vector<Expr> order_;
};
using Function = std::shared_ptr<const FunctionNode>;

/// `annotation.compiler_begin(e, compiler=target)`.
Expr compiler_begin(Expr e, const std::string& target);
/// `annotation.compiler_end(e, compiler=target)`.
Expr compiler_end(Expr e, const std::string& target);
/// The `compiler` attribute of an annotation call, or nullopt for anything else.
std::optional<std::string> annotation_target(const ExprNode* node);
/// The child expressions of a node in evaluation order: callee (non-op) then args; tuple fields;
/// the tuple of a TupleGetItem. Function bodies are not children (they are a new scope).
std::vector<Expr> children(const ExprNode& node);
/// Number of children() of `node`, without building the vector.
inline std::size_t num_children(const ExprNode& node) {
  switch (node.kind()) {
    case ExprKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      return call.args().size() + (call.callee() ? 1 : 0);
    }
    case ExprKind::kTuple:
      return static_cast<const TupleNode&>(node).fields().size();
    case ExprKind::kTupleGetItem:
      return 1;
    default:
      return 0;
  }
}
/// children()[i], without building the vector (i < num_children(node)).
inline const Expr& child(const ExprNode& node, std::size_t i) {
  switch (node.kind()) {
    case ExprKind::kCall: {
      const auto& call = static_cast<const CallNode&>(node);
      if (call.callee()) return i == 0 ? call.callee() : call.args()[i - 1];
      return call.args()[i];
    }
    case ExprKind::kTuple:
      return static_cast<const TupleNode&>(node).fields()[i];
    default:
      return static_cast<const TupleGetItemNode&>(node).tuple();
  }
}
/// A copy of `node` with new children (same order as children()); returns `node` itself when
/// nothing changed. Re-checks types, so it may throw TypeError.
Expr with_children(const Expr& node, std::vector<Expr> new_children);
/// Short description for error messages: `add(...)`, `%x`, `@f`, `%t.1`, `fn`, `const(...)`.
std::string describe(const ExprNode& node);

}  // namespace aotfuzz::ir

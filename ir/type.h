// Tensor, tuple and function types of the IR, immutable and shared.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace aotfuzz::ir {

/// Element types. Order is part of the text form's contract only through the names.
enum class DType : std::uint8_t { kFloat32, kInt32, kInt8 };

/// "float32", "int32", "int8".
std::string_view dtype_name(DType dtype);
/// The dtype called `name`, or nullopt.
std::optional<DType> parse_dtype(std::string_view name);
/// Bytes per element.
std::size_t dtype_bytes(DType dtype);

enum class TypeKind : std::uint8_t { kTensor, kTuple, kFunc };

class TypeNode;
/// Types are immutable and shared; never null once constructed by the factories below.
using Type = std::shared_ptr<const TypeNode>;

/// Tuple nesting is bounded so recursive walks over types are safe on any input.
inline constexpr int kMaxTypeDepth = 64;

/// A tensor type `Tensor[(d0, ...), dtype]`, a tuple `(T1, ...)` or a function `fn (T...) -> R`.
class TypeNode {
 public:
  /// Throws ir::TypeError on a negative dimension.
  static Type tensor(std::vector<std::int64_t> shape, DType dtype);
  /// Throws ir::TypeError when nesting exceeds kMaxTypeDepth.
  static Type tuple(std::vector<Type> fields);
  static Type func(std::vector<Type> params, Type ret);

  TypeKind kind() const { return kind_; }
  bool is_tensor() const { return kind_ == TypeKind::kTensor; }
  bool is_tuple() const { return kind_ == TypeKind::kTuple; }
  bool is_func() const { return kind_ == TypeKind::kFunc; }

  /// Tensor only.
  const std::vector<std::int64_t>& shape() const { return shape_; }
  /// Tensor only.
  DType dtype() const { return dtype_; }
  /// Tuple fields, or function parameter types.
  const std::vector<Type>& fields() const { return fields_; }
  /// Function return type.
  const Type& ret() const { return ret_; }
  /// Tensor element count (1 for rank 0).
  std::int64_t num_elements() const;
  /// Nesting depth: 0 for a tensor.
  int depth() const { return depth_; }
  /// Structural hash, computed once at construction.
  std::size_t hash() const { return hash_; }

 private:
  // Only the factories make one; public through the key so std::make_shared (one allocation)
  // can construct it.
  struct Key {
    explicit Key() = default;
  };

 public:
  explicit TypeNode(Key) {}

 private:
  TypeKind kind_ = TypeKind::kTensor;
  DType dtype_ = DType::kFloat32;
  int depth_ = 0;
  std::size_t hash_ = 0;
  std::vector<std::int64_t> shape_;
  std::vector<Type> fields_;
  Type ret_;
};

/// Structural equality of types.
bool type_equal(const Type& a, const Type& b);
/// The Relay text spelling: `Tensor[(10, 10), float32]`, `float32` for rank 0, `(T1, T2)`.
std::string type_to_string(const Type& type);
/// The tensors of a (possibly nested) tuple type, depth-first left to right; a tensor gives itself.
std::vector<Type> flatten_tensors(const Type& type);
/// Number of tensors `flatten_tensors` would return.
std::size_t flat_count(const Type& type);

}  // namespace aotfuzz::ir

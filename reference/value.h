// Runtime values of the reference interpreter: tensors (typed raw little-endian bytes) and
// possibly nested tuples of values, plus the NaN-canonical comparisons the oracle relies on.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/type.h"

namespace aotfuzz::reference {

/// A value that cannot be built or accessed as asked (wrong byte count, wrong dtype, index out
/// of range, a tensor too large to hold).
class ValueError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// Tensors larger than this are refused (ValueError) instead of exhausting memory.
inline constexpr std::size_t kMaxTensorBytes = std::size_t{1} << 30;

/// The element count of a tensor type, or ValueError when it overflows or exceeds
/// kMaxTensorBytes (ir::TypeNode::num_elements does not check).
std::size_t checked_num_elements(const ir::Type& tensor_type);
/// checked_num_elements without the exception: nullopt where it would throw.
std::optional<std::size_t> num_elements_within_limit(const ir::Type& tensor_type);

/// An immutable runtime value: a tensor or a tuple of values. Copies are cheap (shared storage),
/// so passing values through tuples, calls and annotations never copies tensor data.
class Value {
 public:
  /// An empty value (no type); only useful as a placeholder. Accessors throw ValueError on it.
  Value() = default;

  /// A tensor of `type` holding `bytes` (little-endian elements, row-major). Throws ValueError
  /// unless `type` is a tensor type and `bytes` has exactly num_elements * dtype_bytes bytes.
  static Value tensor(ir::Type type, std::vector<std::uint8_t> bytes);
  /// A tuple of `fields` (each non-empty); its type is the tuple of the fields' types.
  static Value tuple(std::vector<Value> fields);
  /// The same value as tuple(fields); `type_hint` becomes its type when it equals the tuple of
  /// the fields' types (sparing a new type), and is ignored otherwise.
  static Value tuple(std::vector<Value> fields, const ir::Type& type_hint);
  /// Convenience builders from host elements (shape checked against the element count).
  static Value from_f32(std::vector<std::int64_t> shape, const std::vector<float>& elems);
  static Value from_f32_bits(std::vector<std::int64_t> shape,
                             const std::vector<std::uint32_t>& bits);
  static Value from_i32(std::vector<std::int64_t> shape, const std::vector<std::int32_t>& elems);
  static Value from_i8(std::vector<std::int64_t> shape, const std::vector<std::int8_t>& elems);

  bool empty() const { return type_ == nullptr; }
  bool is_tensor() const { return type_ != nullptr && type_->is_tensor(); }
  bool is_tuple() const { return type_ != nullptr && type_->is_tuple(); }
  /// The tensor or tuple type (null for an empty value).
  const ir::Type& type() const { return type_; }

  /// Tensor only: the raw bytes.
  const std::vector<std::uint8_t>& bytes() const;
  /// Tensor only: the number of elements.
  std::size_t num_elements() const;
  /// Tuple only: the fields.
  const std::vector<Value>& fields() const;

  /// Element `i` (row-major) of a float32 / int32 / int8 tensor. Throws ValueError on a dtype
  /// mismatch or an index out of range.
  float f32(std::size_t i) const;
  std::uint32_t f32_bits(std::size_t i) const;
  std::int32_t i32(std::size_t i) const;
  std::int8_t i8(std::size_t i) const;

  /// The tensors of this value, depth-first left to right (a tensor gives itself).
  std::vector<Value> flatten() const;
  /// The same tensors appended to `out`.
  void flatten(std::vector<Value>& out) const;

  /// For reports: `Tensor[(2), float32] [1, -0]` or `(..., ...)`, each tensor showing at most
  /// `max_elems` elements followed by `...`. NaNs print as `nan` (canonical quiet NaN) or
  /// `nan(0x7fc00001)` (any other payload/sign), so distinct payloads stay visible.
  std::string to_string(std::size_t max_elems = 16) const;

 private:
  // Unchecked views of data_: the bytes of a tensor, the fields of a tuple.
  const std::vector<std::uint8_t>& raw_bytes() const {
    return *static_cast<const std::vector<std::uint8_t>*>(data_.get());
  }
  const std::vector<Value>& raw_fields() const {
    return *static_cast<const std::vector<Value>*>(data_.get());
  }

  ir::Type type_;
  // A vector<uint8_t> for a tensor, a vector<Value> for a tuple (type_ says which). One pointer
  // rather than one per kind keeps values small: they are moved at every interpreter step.
  std::shared_ptr<const void> data_;
};

/// One element formatted for reports: floats as the shortest round-trip decimal plus their bit
/// pattern, e.g. `1.5 (0x3fc00000)`; integers in decimal.
std::string element_string(const Value& tensor, std::size_t i);

/// The tensor of a Constant node: `type` and its integer elements (ir::ConstantNode checks
/// that each is exact in the dtype).
Value constant_value(const ir::Type& type, const std::vector<std::int64_t>& values);

/// Same type, and every element bit-for-bit identical, except that any NaN equals any other
/// NaN (payload and sign ignored). +0 and -0 differ.
bool bitwise_equal(const Value& a, const Value& b);

/// Where two values first differ.
struct Mismatch {
  /// Index of the tensor in flatten() order.
  std::size_t flat_index = 0;
  /// Row-major element index within that tensor (0 when the types differ).
  std::size_t element = 0;
  /// The expected and actual element (or type, when the types differ), as element_string.
  std::string expected;
  std::string actual;
  /// True when the types (or tuple structure) differ rather than an element.
  bool type_mismatch = false;

  /// One line for reports: `output 1 element 7: expected 2 (0x40000000), got 3 (0x40400000)`.
  std::string to_string() const;
};

/// The first difference under bitwise_equal's rules, or nullopt when equal.
std::optional<Mismatch> first_mismatch(const Value& expected, const Value& actual);

/// Like first_mismatch, but float32 elements may differ by up to `max_ulp` units in the last
/// place. Distance counts representable floats in the total order -inf < ... < -0 < +0 < ... <
/// +inf, so -0 and +0 are 1 ulp apart and max_ulp == 0 is exactly the bitwise rule. NaN only
/// matches NaN. Integer elements must be equal.
std::optional<Mismatch> first_mismatch(const Value& expected, const Value& actual,
                                       std::uint32_t max_ulp);

/// The ulp distance used above between two non-NaN floats given as bit patterns.
std::uint64_t ulp_distance(std::uint32_t a_bits, std::uint32_t b_bits);

}  // namespace aotfuzz::reference

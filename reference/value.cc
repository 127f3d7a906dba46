// Runtime values: construction checks, element access, printing and NaN-canonical comparison.
#include "reference/value.h"

#include <charconv>
#include <cstring>
#include <utility>

namespace aotfuzz::reference {
namespace {

bool is_nan_bits(std::uint32_t bits) {
  return (bits & 0x7f800000u) == 0x7f800000u && (bits & 0x007fffffu) != 0;
}

std::uint32_t load_u32(const std::vector<std::uint8_t>& bytes, std::size_t i) {
  // Explicit little-endian decode: the byte layout is the contract, not the host's order.
  const std::uint8_t* p = bytes.data() + 4 * i;
  return static_cast<std::uint32_t>(p[0]) | static_cast<std::uint32_t>(p[1]) << 8 |
         static_cast<std::uint32_t>(p[2]) << 16 | static_cast<std::uint32_t>(p[3]) << 24;
}

void store_u32(std::vector<std::uint8_t>& bytes, std::size_t i, std::uint32_t v) {
  std::uint8_t* p = bytes.data() + 4 * i;
  p[0] = static_cast<std::uint8_t>(v);
  p[1] = static_cast<std::uint8_t>(v >> 8);
  p[2] = static_cast<std::uint8_t>(v >> 16);
  p[3] = static_cast<std::uint8_t>(v >> 24);
}

std::string f32_string(std::uint32_t bits) {
  if (is_nan_bits(bits)) {
    if (bits == 0x7fc00000u) return "nan";
    char buf[24];
    auto [end, ec] = std::to_chars(buf, buf + sizeof buf, bits, 16);
    return "nan(0x" + std::string(buf, end) + ")";
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  char buf[48];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, f);
  return std::string(buf, end);
}

std::string hex32(std::uint32_t bits) {
  char buf[16];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, bits, 16);
  std::string digits(buf, end);
  return "0x" + std::string(8 - digits.size(), '0') + digits;
}

// Element i of a tensor as a short string (no bit pattern).
std::string short_element(const Value& t, std::size_t i) {
  switch (t.type()->dtype()) {
    case ir::DType::kFloat32:
      return f32_string(t.f32_bits(i));
    case ir::DType::kInt32:
      return std::to_string(t.i32(i));
    case ir::DType::kInt8:
      return std::to_string(static_cast<int>(t.i8(i)));
  }
  return "?";
}

Value from_words(std::vector<std::int64_t> shape, ir::DType dtype,
                 const std::vector<std::uint32_t>& words) {
  ir::Type type = ir::TypeNode::tensor(std::move(shape), dtype);
  if (checked_num_elements(type) != words.size()) {
    throw ValueError("tensor of type " + ir::type_to_string(type) + " given " +
                     std::to_string(words.size()) + " elements");
  }
  std::vector<std::uint8_t> bytes(4 * words.size());
  for (std::size_t i = 0; i < words.size(); ++i) store_u32(bytes, i, words[i]);
  return Value::tensor(std::move(type), std::move(bytes));
}

// Compares two tensors of equal type element by element; max_ulp 0 is the bitwise rule.
std::optional<Mismatch> compare_tensors(const Value& e, const Value& a, std::size_t flat_index,
                                        std::uint32_t max_ulp) {
  const std::size_t n = e.num_elements();
  const bool is_float = e.type()->dtype() == ir::DType::kFloat32;
  if (!is_float) {
    const auto& eb = e.bytes();
    const auto& ab = a.bytes();
    if (eb == ab) return std::nullopt;
    const std::size_t width = ir::dtype_bytes(e.type()->dtype());
    for (std::size_t i = 0; i < n; ++i) {
      if (std::memcmp(eb.data() + i * width, ab.data() + i * width, width) != 0) {
        return Mismatch{flat_index, i, element_string(e, i), element_string(a, i), false};
      }
    }
    return std::nullopt;
  }
  // Equal bytes are equal elements; the usual case needs no per-element decoding.
  if (e.bytes() == a.bytes()) return std::nullopt;
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t x = e.f32_bits(i);
    const std::uint32_t y = a.f32_bits(i);
    if (x == y) continue;
    const bool xn = is_nan_bits(x);
    const bool yn = is_nan_bits(y);
    bool same;
    if (xn || yn) {
      same = xn && yn;
    } else {
      same = ulp_distance(x, y) <= max_ulp;
    }
    if (!same) return Mismatch{flat_index, i, element_string(e, i), element_string(a, i), false};
  }
  return std::nullopt;
}

std::optional<Mismatch> compare(const Value& expected, const Value& actual, std::uint32_t max_ulp) {
  if (expected.empty() || actual.empty() || !ir::type_equal(expected.type(), actual.type())) {
    return Mismatch{
        0, 0, expected.empty() ? std::string("<empty>") : ir::type_to_string(expected.type()),
        actual.empty() ? std::string("<empty>") : ir::type_to_string(actual.type()), true};
  }
  // Equal types: both are tensors, or tuples of the same structure.
  if (expected.is_tensor()) return compare_tensors(expected, actual, 0, max_ulp);
  const std::vector<Value> es = expected.flatten();
  const std::vector<Value> as = actual.flatten();
  for (std::size_t k = 0; k < es.size(); ++k) {
    if (auto m = compare_tensors(es[k], as[k], k, max_ulp)) return m;
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::size_t> num_elements_within_limit(const ir::Type& type) {
  if (!type || !type->is_tensor()) return std::nullopt;
  std::uint64_t n = 1;
  for (std::int64_t d : type->shape()) {
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) return std::nullopt;
  }
  if (n > kMaxTensorBytes / ir::dtype_bytes(type->dtype())) return std::nullopt;
  return static_cast<std::size_t>(n);
}

std::size_t checked_num_elements(const ir::Type& type) {
  if (const auto n = num_elements_within_limit(type)) return *n;
  // The message says which limit was hit; only a refused type gets here.
  if (!type || !type->is_tensor()) throw ValueError("not a tensor type");
  std::uint64_t n = 1;
  for (std::int64_t d : type->shape()) {
    if (__builtin_mul_overflow(n, static_cast<std::uint64_t>(d), &n)) {
      throw ValueError("tensor " + ir::type_to_string(type) + " has too many elements");
    }
  }
  throw ValueError("tensor " + ir::type_to_string(type) + " exceeds " +
                   std::to_string(kMaxTensorBytes) + " bytes");
}

Value Value::tensor(ir::Type type, std::vector<std::uint8_t> bytes) {
  if (!type || !type->is_tensor()) {
    throw ValueError("Value::tensor needs a tensor type, got " +
                     (type ? ir::type_to_string(type) : std::string("null")));
  }
  const std::size_t want = checked_num_elements(type) * ir::dtype_bytes(type->dtype());
  if (bytes.size() != want) {
    throw ValueError("tensor of type " + ir::type_to_string(type) + " needs " +
                     std::to_string(want) + " bytes, got " + std::to_string(bytes.size()));
  }
  Value v;
  v.type_ = std::move(type);
  v.data_ = std::make_shared<const std::vector<std::uint8_t>>(std::move(bytes));
  return v;
}

Value Value::tuple(std::vector<Value> fields) {
  std::vector<ir::Type> types;
  types.reserve(fields.size());
  for (std::size_t i = 0; i < fields.size(); ++i) {
    if (fields[i].empty()) throw ValueError("tuple field " + std::to_string(i) + " is empty");
    types.push_back(fields[i].type());
  }
  Value v;
  v.type_ = ir::TypeNode::tuple(std::move(types));
  v.data_ = std::make_shared<const std::vector<Value>>(std::move(fields));
  return v;
}

Value Value::tuple(std::vector<Value> fields, const ir::Type& type_hint) {
  bool fits = type_hint && type_hint->is_tuple() && type_hint->fields().size() == fields.size();
  for (std::size_t i = 0; fits && i < fields.size(); ++i) {
    fits = !fields[i].empty() && ir::type_equal(fields[i].type(), type_hint->fields()[i]);
  }
  if (!fits) return tuple(std::move(fields));
  Value v;
  v.type_ = type_hint;
  v.data_ = std::make_shared<const std::vector<Value>>(std::move(fields));
  return v;
}

Value Value::from_f32(std::vector<std::int64_t> shape, const std::vector<float>& elems) {
  std::vector<std::uint32_t> words(elems.size());
  for (std::size_t i = 0; i < elems.size(); ++i) std::memcpy(&words[i], &elems[i], 4);
  return from_words(std::move(shape), ir::DType::kFloat32, words);
}

Value Value::from_f32_bits(std::vector<std::int64_t> shape,
                           const std::vector<std::uint32_t>& bits) {
  return from_words(std::move(shape), ir::DType::kFloat32, bits);
}

Value Value::from_i32(std::vector<std::int64_t> shape, const std::vector<std::int32_t>& elems) {
  std::vector<std::uint32_t> words(elems.begin(), elems.end());
  return from_words(std::move(shape), ir::DType::kInt32, words);
}

Value Value::from_i8(std::vector<std::int64_t> shape, const std::vector<std::int8_t>& elems) {
  ir::Type type = ir::TypeNode::tensor(std::move(shape), ir::DType::kInt8);
  if (checked_num_elements(type) != elems.size()) {
    throw ValueError("tensor of type " + ir::type_to_string(type) + " given " +
                     std::to_string(elems.size()) + " elements");
  }
  std::vector<std::uint8_t> bytes(elems.size());
  for (std::size_t i = 0; i < elems.size(); ++i) bytes[i] = static_cast<std::uint8_t>(elems[i]);
  return tensor(std::move(type), std::move(bytes));
}

Value constant_value(const ir::Type& type, const std::vector<std::int64_t>& values) {
  if (!type || !type->is_tensor()) throw ValueError("a constant needs a tensor type");
  std::vector<std::int64_t> shape = type->shape();
  switch (type->dtype()) {
    case ir::DType::kFloat32:
      return Value::from_f32(std::move(shape), std::vector<float>(values.begin(), values.end()));
    case ir::DType::kInt32: {
      std::vector<std::int32_t> elems;
      for (std::int64_t v : values) elems.push_back(static_cast<std::int32_t>(v));
      return Value::from_i32(std::move(shape), elems);
    }
    case ir::DType::kInt8: {
      std::vector<std::int8_t> elems;
      for (std::int64_t v : values) elems.push_back(static_cast<std::int8_t>(v));
      return Value::from_i8(std::move(shape), elems);
    }
  }
  throw ValueError("unsupported dtype");
}

const std::vector<std::uint8_t>& Value::bytes() const {
  if (!is_tensor()) throw ValueError("bytes() of a value that is not a tensor");
  return raw_bytes();
}

std::size_t Value::num_elements() const {
  if (!is_tensor()) throw ValueError("num_elements() of a value that is not a tensor");
  return raw_bytes().size() / ir::dtype_bytes(type_->dtype());
}

const std::vector<Value>& Value::fields() const {
  if (!is_tuple()) throw ValueError("fields() of a value that is not a tuple");
  return raw_fields();
}

std::uint32_t Value::f32_bits(std::size_t i) const {
  if (!is_tensor() || type_->dtype() != ir::DType::kFloat32) {
    throw ValueError("float32 element of a value that is not a float32 tensor");
  }
  if (i >= raw_bytes().size() / 4) {
    throw ValueError("element " + std::to_string(i) + " out of range for " +
                     ir::type_to_string(type_));
  }
  return load_u32(raw_bytes(), i);
}

float Value::f32(std::size_t i) const {
  const std::uint32_t bits = f32_bits(i);
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::int32_t Value::i32(std::size_t i) const {
  if (!is_tensor() || type_->dtype() != ir::DType::kInt32) {
    throw ValueError("int32 element of a value that is not an int32 tensor");
  }
  if (i >= raw_bytes().size() / 4) {
    throw ValueError("element " + std::to_string(i) + " out of range for " +
                     ir::type_to_string(type_));
  }
  return static_cast<std::int32_t>(load_u32(raw_bytes(), i));
}

std::int8_t Value::i8(std::size_t i) const {
  if (!is_tensor() || type_->dtype() != ir::DType::kInt8) {
    throw ValueError("int8 element of a value that is not an int8 tensor");
  }
  if (i >= raw_bytes().size()) {
    throw ValueError("element " + std::to_string(i) + " out of range for " +
                     ir::type_to_string(type_));
  }
  return static_cast<std::int8_t>(raw_bytes()[i]);
}

std::vector<Value> Value::flatten() const {
  std::vector<Value> out;
  flatten(out);
  return out;
}

void Value::flatten(std::vector<Value>& out) const {
  if (empty()) return;
  if (is_tensor()) {
    out.push_back(*this);
    return;
  }
  // Explicit stack, fields pushed in reverse so they pop left to right.
  std::vector<const Value*> stack{this};
  while (!stack.empty()) {
    const Value* v = stack.back();
    stack.pop_back();
    if (v->is_tensor()) {
      out.push_back(*v);
      continue;
    }
    const auto& fs = v->raw_fields();
    for (auto it = fs.rbegin(); it != fs.rend(); ++it) stack.push_back(&*it);
  }
}

std::string Value::to_string(std::size_t max_elems) const {
  if (empty()) return "<empty>";
  if (is_tuple()) {
    std::string s = "(";
    const auto& fs = raw_fields();
    for (std::size_t i = 0; i < fs.size(); ++i) {
      if (i > 0) s += ", ";
      s += fs[i].to_string(max_elems);  // Depth bounded by ir::kMaxTypeDepth.
    }
    if (fs.size() == 1) s += ",";
    return s + ")";
  }
  std::string s = ir::type_to_string(type_) + " [";
  const std::size_t n = num_elements();
  for (std::size_t i = 0; i < n && i < max_elems; ++i) {
    if (i > 0) s += ", ";
    s += short_element(*this, i);
  }
  if (n > max_elems) s += max_elems > 0 ? ", ..." : "...";
  return s + "]";
}

std::string element_string(const Value& t, std::size_t i) {
  if (!t.is_tensor()) throw ValueError("element_string of a value that is not a tensor");
  if (t.type()->dtype() == ir::DType::kFloat32) {
    const std::uint32_t bits = t.f32_bits(i);
    return f32_string(bits) + " (" + hex32(bits) + ")";
  }
  return short_element(t, i);
}

bool bitwise_equal(const Value& a, const Value& b) { return !compare(a, b, 0).has_value(); }

std::optional<Mismatch> first_mismatch(const Value& expected, const Value& actual) {
  return compare(expected, actual, 0);
}

std::optional<Mismatch> first_mismatch(const Value& expected, const Value& actual,
                                       std::uint32_t max_ulp) {
  return compare(expected, actual, max_ulp);
}

std::uint64_t ulp_distance(std::uint32_t a_bits, std::uint32_t b_bits) {
  // Map sign-magnitude onto a monotone unsigned scale: negatives below 0x80000000, with -0 at
  // 0x7fffffff and +0 at 0x80000000.
  auto ordered = [](std::uint32_t bits) -> std::uint64_t {
    return (bits & 0x80000000u) != 0 ? ~bits : (bits | 0x80000000u);
  };
  const std::uint64_t x = ordered(a_bits);
  const std::uint64_t y = ordered(b_bits);
  return x > y ? x - y : y - x;
}

std::string Mismatch::to_string() const {
  if (type_mismatch) return "type mismatch: expected " + expected + ", got " + actual;
  return "output " + std::to_string(flat_index) + " element " + std::to_string(element) +
         ": expected " + expected + ", got " + actual;
}

}  // namespace aotfuzz::reference

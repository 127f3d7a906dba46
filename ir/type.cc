// Type construction, equality and printing.
#include "ir/type.h"

#include "ir/error.h"

namespace aotfuzz::ir {
namespace {

std::size_t mix(std::size_t seed, std::size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

}  // namespace

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float32";
    case DType::kInt32:
      return "int32";
    case DType::kInt8:
      return "int8";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view name) {
  if (name == "float32") return DType::kFloat32;
  if (name == "int32") return DType::kInt32;
  if (name == "int8") return DType::kInt8;
  return std::nullopt;
}

std::size_t dtype_bytes(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return 4;
    case DType::kInt32:
      return 4;
    case DType::kInt8:
      return 1;
  }
  return 0;
}

Type TypeNode::tensor(std::vector<std::int64_t> shape, DType dtype) {
  auto node = std::make_shared<TypeNode>(Key());
  node->kind_ = TypeKind::kTensor;
  node->dtype_ = dtype;
  std::size_t h = mix(1, static_cast<std::size_t>(dtype));
  for (auto d : shape) {
    if (d < 0) throw TypeError("negative dimension " + std::to_string(d) + " in tensor shape");
    h = mix(h, static_cast<std::size_t>(d));
  }
  node->shape_ = std::move(shape);
  node->hash_ = mix(h, node->shape_.size());
  return node;
}

Type TypeNode::tuple(std::vector<Type> fields) {
  auto node = std::make_shared<TypeNode>(Key());
  node->kind_ = TypeKind::kTuple;
  std::size_t h = 2;
  int depth = 0;
  for (const auto& f : fields) {
    if (!f) throw TypeError("null tuple field type");
    depth = std::max(depth, f->depth());
    h = mix(h, f->hash());
  }
  if (depth + 1 > kMaxTypeDepth) {
    throw TypeError("tuple types nested deeper than " + std::to_string(kMaxTypeDepth));
  }
  node->depth_ = depth + 1;
  node->fields_ = std::move(fields);
  node->hash_ = mix(h, node->fields_.size());
  return node;
}

Type TypeNode::func(std::vector<Type> params, Type ret) {
  auto node = std::make_shared<TypeNode>(Key());
  node->kind_ = TypeKind::kFunc;
  if (!ret) throw TypeError("function type without a return type");
  std::size_t h = mix(3, ret->hash());
  int depth = ret->depth();
  for (const auto& p : params) {
    if (!p) throw TypeError("null parameter type");
    depth = std::max(depth, p->depth());
    h = mix(h, p->hash());
  }
  if (depth + 1 > kMaxTypeDepth) {
    throw TypeError("function types nested deeper than " + std::to_string(kMaxTypeDepth));
  }
  node->depth_ = depth + 1;
  node->fields_ = std::move(params);
  node->ret_ = std::move(ret);
  node->hash_ = mix(h, node->fields_.size());
  return node;
}

std::int64_t TypeNode::num_elements() const {
  std::int64_t n = 1;
  for (auto d : shape_) n *= d;
  return n;
}

// Recursion below is bounded by kMaxTypeDepth, enforced at construction.
bool type_equal(const Type& a, const Type& b) {
  if (a == b) return true;
  if (!a || !b) return false;
  if (a->kind() != b->kind() || a->hash() != b->hash()) return false;
  switch (a->kind()) {
    case TypeKind::kTensor:
      return a->dtype() == b->dtype() && a->shape() == b->shape();
    case TypeKind::kFunc:
      if (!type_equal(a->ret(), b->ret())) return false;
      [[fallthrough]];
    case TypeKind::kTuple:
      if (a->fields().size() != b->fields().size()) return false;
      for (std::size_t i = 0; i < a->fields().size(); ++i) {
        if (!type_equal(a->fields()[i], b->fields()[i])) return false;
      }
      return true;
  }
  return false;
}

std::string type_to_string(const Type& type) {
  if (!type) return "?";
  std::string out;
  switch (type->kind()) {
    case TypeKind::kTensor: {
      if (type->shape().empty()) return std::string(dtype_name(type->dtype()));
      out = "Tensor[(";
      for (std::size_t i = 0; i < type->shape().size(); ++i) {
        if (i) out += ", ";
        out += std::to_string(type->shape()[i]);
      }
      out += "), ";
      out += dtype_name(type->dtype());
      out += "]";
      return out;
    }
    case TypeKind::kTuple: {
      out = "(";
      for (std::size_t i = 0; i < type->fields().size(); ++i) {
        if (i) out += ", ";
        out += type_to_string(type->fields()[i]);
      }
      // A one-field tuple keeps a trailing comma so it reads back as a tuple.
      if (type->fields().size() == 1) out += ",";
      out += ")";
      return out;
    }
    case TypeKind::kFunc: {
      out = "fn (";
      for (std::size_t i = 0; i < type->fields().size(); ++i) {
        if (i) out += ", ";
        out += type_to_string(type->fields()[i]);
      }
      out += ") -> " + type_to_string(type->ret());
      return out;
    }
  }
  return out;
}

std::vector<Type> flatten_tensors(const Type& type) {
  std::vector<Type> out;
  if (!type->is_tuple()) {
    out.push_back(type);
    return out;
  }
  out.reserve(flat_count(type));
  // Depth is bounded by kMaxTypeDepth, so recursing on the type is safe.
  const auto walk = [&out](const auto& self, const Type& t) -> void {
    if (!t->is_tuple()) {
      out.push_back(t);
      return;
    }
    for (const auto& f : t->fields()) self(self, f);
  };
  walk(walk, type);
  return out;
}

std::size_t flat_count(const Type& type) {
  if (!type->is_tuple()) return 1;
  std::size_t n = 0;
  for (const auto& f : type->fields()) n += flat_count(f);
  return n;
}

}  // namespace aotfuzz::ir

// Structural equality and hashing: graphs compare by shape, ops, attributes and types, with
// variables matched by their binding position (alpha-equivalence) and sharing ignored.
#pragma once

#include <cstddef>

#include "ir/expr.h"
#include "ir/module.h"

namespace aotfuzz::ir {

/// True when `a` and `b` are the same computation up to variable names.
bool structural_equal(const Expr& a, const Expr& b);
/// Same functions under the same names in the same order.
bool structural_equal(const Module& a, const Module& b);
/// Consistent with structural_equal: equal graphs hash equal.
std::size_t structural_hash(const Expr& e);
std::size_t structural_hash(const Module& m);

}  // namespace aotfuzz::ir

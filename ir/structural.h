// Structural equality and hashing: graphs compare by shape, ops, attributes and types, with
// variables matched by their binding position (alpha-equivalence) and sharing ignored.
#pragma once

#include <cstddef>

#include "ir/expr.h"
#include "ir/module.h"

namespace aotfuzz::ir {

/// Whether structural_equal matches variables by binding position only, or also by name (two
/// modules then print the same).
enum class VarNames { kIgnored, kCompared };

/// True when `a` and `b` are the same computation up to variable names (with kCompared, names
/// included).
bool structural_equal(const Expr& a, const Expr& b, VarNames names = VarNames::kIgnored);
/// structural_equal for two functions that use no variable they do not bind, as verify() requires
/// of a module's functions; faster when they share nodes.
bool closed_functions_equal(const Function& a, const Function& b,
                            VarNames names = VarNames::kIgnored);
/// Same functions under the same names in the same order.
bool structural_equal(const Module& a, const Module& b);
/// Consistent with structural_equal: equal graphs hash equal.
std::size_t structural_hash(const Expr& e);
std::size_t structural_hash(const Module& m);

}  // namespace aotfuzz::ir

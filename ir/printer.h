// The Relay text printer: the canonical, stable text form of modules (docs/design.md, "The IR and
// its text form").
#pragma once

#include <string>

#include "ir/expr.h"
#include "ir/module.h"

namespace aotfuzz::ir {

/// Printer knobs. The defaults give the canonical form that print→parse→print preserves.
struct PrintOptions {
  /// Append ` /* ty=T */` after every bound value and after each function's result.
  bool type_comments = false;
};

/// The module in Relay text: a `#[version = "0.0.5"]` header, then every function in module
/// order, separated by one blank line. Every non-atomic node is bound once as `%n = ...;` in
/// post order, children left to right except that a call's arguments come before its callee
/// (as TVM lifts them, so a bound `fn` sits right above its call); one counter per top-level
/// function, shared with nested `fn` bodies. The result of a body is printed last, unbound.
/// Deterministic, iterative (no recursion over the graph). For every module that passes verify(),
/// print_module(parse_module(print_module(m))) equals print_module(m). A parameter name that is
/// not an identifier prints quoted (`%"input:0"`); one that would shadow a visible name gets a
/// suffix (`%p0_1`), so the text always reads back.
std::string print_module(const Module& module, const PrintOptions& options = {});

/// The text form of local `name`: bare when an identifier, else quoted when is_quotable_name,
/// else sanitized (only unverified modules hold such names).
std::string local_spelling(const std::string& name);

/// Whether `%"name"` carries `name`: printable ASCII other than '"' and '\\', not empty and not
/// all digits (those spell the numbered bindings). verify() asks this of every parameter name.
bool is_quotable_name(const std::string& name);

/// Debug form of one expression in the same binding style: bindings, then the result. A
/// Function prints as `fn (...) -> T { ... }`. Free variables print by name.
std::string print_expr(const Expr& expr, const PrintOptions& options = {});

/// Relay spelling of an attribute value: integers bare, strings quoted with C-style escapes.
std::string attr_value_to_string(const AttrValue& value);

}  // namespace aotfuzz::ir

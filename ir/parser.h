// The Relay text parser: the subset of TVM's text format described in docs/design.md ("The IR and
// its text form"), hardened so that any bytes either parse or raise ir::ParseError.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "ir/module.h"

namespace aotfuzz::ir {

/// Nesting bound (expressions, types and local functions together) of the parser.
inline constexpr int kMaxParseDepth = 256;
/// Largest tensor rank the parser accepts.
inline constexpr int kMaxParseRank = 32;
/// Largest element count of one tensor type the parser accepts (2^31).
inline constexpr std::int64_t kMaxParseElements = std::int64_t{1} << 31;

/// Parses a module. Accepts what print_module() prints and what TVM v0.8 prints for the IR
/// subset: an optional `#[version = "..."]` header, `def @f(%x: T, Attr=v, ...) [-> T] {...}`
/// functions referring to each other in any order, bindings `%name = e;` (no shadowing),
/// inline nested expressions, tuples `(a, b)` / `(a,)`, `e.i`, local `fn (...) {...}`, `/* */`
/// and `//` comments. The module keeps the order of appearance.
///
/// Throws ir::ParseError (`filename:line:col: error: ...`, saying what was expected) on any bad
/// input: syntax, unknown ops or dtypes, undefined `%x` / `@f`, redefinitions, recursive
/// `def`s, nesting deeper than kMaxParseDepth, out-of-range numbers and shapes, and type errors
/// of node construction (reported at the offending construct). Never crashes or hangs on any
/// bytes. Does not call verify(): callers do.
Module parse_module(std::string_view text, const std::string& filename = "<input>");

}  // namespace aotfuzz::ir

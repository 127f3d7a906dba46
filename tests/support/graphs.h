// Test support: graphs built directly (long chains, annotated or not) and counts over them.
#pragma once

#include <cstddef>
#include <functional>
#include <string>

#include "ir/expr.h"
#include "ir/module.h"

namespace aotfuzz::test_support {

/// The number of Call nodes reachable from `body`.
std::size_t count_calls(const ir::Expr& body);

/// A chain of `n` host adds of one input (float32[4]).
ir::Module host_chain(int n);

/// A chain of `n` adds; op i is in a region of target `target_of(i)` ("" = host), each op taking
/// the previous value and one shared input. With `split`, every op is its own region (an end and
/// a begin between any two region ops, as AnnotateTarget leaves a graph); otherwise only a change
/// of target crosses a boundary.
ir::Module annotated_chain(int n, bool split, const std::function<std::string(int)>& target_of);

}  // namespace aotfuzz::test_support

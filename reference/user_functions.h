// What the reference passes share: which functions of a module a pass rewrites.
#pragma once

#include <functional>

#include "ir/module.h"

namespace aotfuzz::reference {

/// A function the user wrote: neither outlined for an external compiler (Compiler) nor a fused
/// kernel (Primitive). TVM's passes skip the others.
bool is_user_function(const ir::FunctionNode& fn);

/// The module with each user function's body replaced by `body_of(name, function)`, others
/// unchanged, in the same order.
ir::Module map_user_functions(
    const ir::Module& module,
    const std::function<ir::Expr(const std::string&, const ir::Function&)>& body_of);

/// Runs `work` on a thread whose stack fits a recursive walk of `nodes` nodes: the reference
/// passes recurse over the graph as TVM's visitors do, which the caller's stack may not hold for
/// long graphs. Throws std::length_error above kMaxReferenceNodes.
void with_stack_for(std::size_t nodes, const std::function<void()>& work);

}  // namespace aotfuzz::reference

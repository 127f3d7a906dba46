// FuseOps as TVM v0.8 implements it (src/relay/transforms/fuse_ops.cc) for the host side of a
// partitioned module, and the names TVM's lowering gives the resulting kernels.
#pragma once

#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "aot/options.h"
#include "ir/module.h"
#include "ir/node_map.h"

namespace aotfuzz::aot {

/// Fuses the host ops of every function without a `Compiler` or `Primitive` attribute.
///
/// TVM's algorithm: an indexed forward graph in post order (parameters first); op patterns
/// add/subtract/multiply = broadcast (an edge whose argument has the result's shape is
/// elementwise), Tuple = tuple, TupleGetItem = injective, calls of global (external) functions
/// and annotations = opaque; a post-dominator tree by least common ancestors; three phases of
/// fusing each node into its immediate post-dominator's group when every path between them
/// satisfies TVM's pattern conditions and the group stays within `max_fuse_depth` nodes. Each
/// group becomes `fn (%p0, %p1, ...) { ... }` with `Primitive=1`, called where its root was;
/// parameters are the group's distinct outside inputs in the order the rewrite meets them, so a
/// TupleGetItem of an external call fused into its consumer makes the whole tuple one parameter
/// (the TVM #9036 path). A Tuple that roots its group (e.g. @main's result) and an isolated
/// TupleGetItem are left as they are; external calls are never fused.
///
/// Deliberate difference: TVM wraps a group without any call (e.g. `Tuple(%a, %b).0`) in a
/// function with `Primitive=0`, which TVM's AoT executor then cannot call; we leave such a group
/// unwrapped (same value, no kernel).
ir::Module fuse_ops(const ir::Module& module, const Options& options);

/// FuseOps on one function; returns the new body.
ir::Expr fuse_ops_in_function(const ir::Function& function,
                              int max_fuse_depth = kDefaultMaxFuseDepth, const BugSet& bugs = {});

/// TVM's readable kernel name before mangling: "fused" then "_<op>" for every op call of the
/// primitive function's body in post order (arguments left to right), e.g. "fused_add_add".
/// Past 80 characters it is cut to 80 and followed by "_<hash>_", as TVM does; the hash is a
/// decimal FNV-1a 64 of the full name (TVM uses std::hash, which is not portable).
std::string kernel_base_name(const ir::FunctionNode& primitive);

/// One host kernel: a class of structurally equal primitive functions and its C name.
struct Kernel {
  std::string name;
  ir::Function function;
};

/// The names TVM v0.8's LowerTE gives the host kernels of a fused module: functions are lowered
/// in pre order from each function's body (a call before its arguments, arguments left to
/// right), @main first, then the other non-external functions in module order. Structurally
/// equal primitive functions share one kernel (TVM's compile-engine cache). A name is
/// `tvmgen_<mod_name>_<kernel_base_name>` (sanitized), made unique by appending `_1`, `_2`, ...
/// when a different function got that name before (TVM's GetUniqueName).
///
/// Chosen design: the names are computed here, not stored on the functions, so the fused module
/// prints exactly as TVM's FuseOps output (`Primitive=1` only) and codegen asks this class.
class KernelNames {
 public:
  /// `bugs`: only kKernelNameClash is read (the unique-name counter skipped).
  KernelNames(const ir::Module& fused, std::string_view mod_name, BugSet bugs = {});
  /// The name of the kernel implementing `primitive` (a Primitive=1 local function called from a
  /// non-external function of the module). Throws PassError when it is not one.
  const std::string& name_of(const ir::FunctionNode* primitive) const;
  /// The distinct kernels in naming order.
  const std::vector<Kernel>& kernels() const { return kernels_; }

 private:
  std::vector<Kernel> kernels_;
  ir::NodeMap<std::size_t> kernel_of_;  // by primitive function
};

}  // namespace aotfuzz::aot

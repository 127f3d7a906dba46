// Storage planning for the AoT executor, as TVM's AoT does it: one storage id per flattened tensor
// of every main parameter and call result, tuples as the concatenation of their fields, model
// outputs computed straight into the user's output buffers, and (optionally) liveness-based reuse
// of dead intermediates inside one static workspace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "aot/bugs.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace aotfuzz::aot {

/// Where a tensor lives at run time.
enum class BufferKind : std::uint8_t {
  kInput,         ///< the user's input buffer `index` (flattened main parameters)
  kOutput,        ///< the user's output buffer `index` (flattened main result)
  kIntermediate,  ///< workspace buffer `sid_<index>`
  kConstant,      ///< the read-only constant `StoragePlan::constants[index]` (TVM's linked param)
};

/// One physical buffer.
struct BufferRef {
  BufferKind kind = BufferKind::kIntermediate;
  int index = 0;
  friend bool operator==(const BufferRef&, const BufferRef&) = default;
};

/// "input 0", "output 1", "sid_3", "constant 0".
std::string to_string(const BufferRef& ref);

/// A tensor value placed in a buffer.
struct TensorRef {
  BufferRef buffer;
  ir::Type type;  ///< always a tensor type
};

/// One call of @main in execution (topological) order.
struct CallStep {
  /// The call node of @main: its callee is a GlobalVar (external function) or a local Function.
  std::shared_ptr<const ir::CallNode> call;
  /// Per call argument, the storage of each of its flattened tensors (a tuple argument has one
  /// entry per field).
  std::vector<std::vector<TensorRef>> args;
  /// The storage of each flattened result tensor.
  std::vector<TensorRef> results;
};

/// A copy done after every call: an output that is an input of main or a constant (TVM's
/// CopyToOutput), or repeats an earlier output.
struct OutputCopy {
  int output = 0;
  TensorRef source;  ///< an input buffer, a constant or an earlier output buffer
};

/// A workspace buffer `sid_<sid>` at `offset` bytes into the workspace.
struct WorkspaceBuffer {
  int sid = 0;
  std::size_t bytes = 0;   ///< the largest tensor placed in it (unaligned)
  std::size_t offset = 0;  ///< multiple of the alignment
};

/// The whole plan of one @main.
struct StoragePlan {
  std::vector<ir::Type> inputs;   ///< flattened main parameter tensor types
  std::vector<ir::Type> outputs;  ///< flattened main result tensor types
  /// The constants @main uses, in post order: never in the workspace, never written.
  std::vector<std::shared_ptr<const ir::ConstantNode>> constants;
  std::vector<CallStep> steps;
  std::vector<OutputCopy> copies;
  std::vector<WorkspaceBuffer> buffers;  ///< indexed by sid
  /// Total workspace bytes: every buffer's size rounded up to the alignment (0 when none).
  std::size_t workspace_bytes = 0;
  /// Call-result tensors that needed workspace (the sid count without reuse).
  std::size_t num_intermediate_tensors = 0;
};

/// Planning switches.
struct StorageOptions {
  /// Liveness-based reuse of dead intermediates (a buffer of the same or a larger size).
  bool reuse = true;
  /// Byte alignment of every workspace offset (a power of two).
  std::size_t alignment = 16;
  /// Honoured here: kReuseLiveStorage, kIntermediateInOutput, kDroppedDuplicateOutput.
  BugSet bugs;
};

/// Bytes of a tensor type; throws CodegenError when the size overflows or exceeds 1 GiB.
std::size_t tensor_bytes(const ir::Type& tensor_type);

/// Plans @main of a fused module (a DAG of main parameters, calls of global external functions
/// and of local primitive functions, tuples and TupleGetItems). Throws CodegenError naming the
/// node for anything else (an unfused operator, a free variable, a function used as a value).
///
/// Deterministic: steps follow ir::post_order of main's body; sids are numbered in allocation
/// order; a reused buffer is the smallest free one that is large enough (lowest sid on ties).
StoragePlan plan_storage(const ir::Function& main, const StorageOptions& options = {});
/// The same, given `order == ir::post_order(main->body())` already (callers that also resolve
/// the callees of @main walk it once).
StoragePlan plan_storage(const ir::Function& main, const StorageOptions& options,
                         const std::vector<ir::Expr>& order);

}  // namespace aotfuzz::aot

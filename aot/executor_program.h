// The AoT executor's call sequence as data: for each call of `tvmgen_<mod>_run_model`, the callee,
// the buffer and tensor type in every argument slot and the argument count, with the bug switches
// already applied. The C emitter prints it, and the plan interpreter (oracle/plan_interpreter.h)
// runs it in process, so both see exactly the same calls.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "aot/codegen.h"
#include "aot/storage_plan.h"
#include "ir/expr.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// One call of the executor, in execution order.
struct ExecutorCall {
  /// The C symbol called (`tvmgen_<mod>_fused_add`, `tvmgen_<mod>_ccompiler_main_0`, ...).
  std::string callee;
  /// An external (non-default `Compiler`) global function rather than a host kernel.
  bool external = false;
  /// The packed convention: slots go through the shared `stack_value`/`stack_tcode` arrays and
  /// a stack DLTensor each, and `num_args` is passed. Otherwise a direct call with one `void*`
  /// per slot.
  bool packed = true;
  /// The callee's function: a global of the fused module (external) or a local primitive
  /// function (kernel).
  ir::Function function;
  /// The name of `function` in the fused module (external functions only; empty for kernels).
  std::string global_name;
  /// The flattened parameter and result tensor types of the callee: slot k < inputs.size() is
  /// read as inputs[k], the next slots are written as outputs. This is what the callee's code
  /// assumes, whatever the executor passes.
  std::vector<ir::Type> callee_inputs;
  std::vector<ir::Type> callee_outputs;
  /// What the executor passes, slot 0 first: the flattened arguments, then one slot per result.
  /// The type is the one the executor describes the buffer with (the DLTensor's shape/dtype).
  std::vector<TensorRef> slots;
  /// The call node of @main this call comes from.
  std::shared_ptr<const ir::CallNode> call;
  /// The executor returns the callee's failure (a nonzero return code) at once.
  bool checks_return = true;
  /// Packed calls: every field of each slot's DLTensor is set, not only the data pointer of an
  /// intermediate's.
  bool describes_intermediates = true;

  /// The `num_args` of a packed call, or the argument count of a direct call.
  int num_args() const { return static_cast<int>(slots.size()); }
  /// How many slots the callee reads and writes (its flattened inputs plus outputs).
  int callee_arity() const {
    return static_cast<int>(callee_inputs.size() + callee_outputs.size());
  }
};

/// The whole executor of one module.
struct ExecutorProgram {
  std::vector<ir::Type> inputs;   ///< the user's input buffers (flattened main parameters)
  std::vector<ir::Type> outputs;  ///< the user's output buffers (flattened main result)
  /// The read-only constants of @main (BufferKind::kConstant indexes them).
  std::vector<std::shared_ptr<const ir::ConstantNode>> constants;
  std::vector<ExecutorCall> calls;
  /// memcpy's done after the last call (repeated and pass-through outputs).
  std::vector<OutputCopy> copies;
  /// Workspace buffers `sid_<n>`, indexed by sid, and the workspace size in bytes.
  std::vector<WorkspaceBuffer> buffers;
  std::size_t workspace_bytes = 0;
  /// Entries of the shared `stack_value`/`stack_tcode` arrays: the largest slot count or callee
  /// arity over the packed calls (0 when no call is packed).
  std::size_t stack_size = 0;
};

/// The program `generate_c(fused, options)` emits as `tvmgen_<mod>_run_model`, bug switches
/// (kTupleArgFirstFieldOnly, kStaleUnpackedArg, kUnpackedExtraArg, kIgnoredKernelError,
/// kDLTensorFieldsUnset and the storage switches) applied. Throws
/// CodegenError like generate_c for modules outside the fused shape.
ExecutorProgram build_executor_program(const ir::Module& fused, const Options& options);
/// The same, and `*expected_arity = expected_call_arity(fused, options)` from the same callee
/// resolution (the in-process oracle needs both for every input).
ExecutorProgram build_executor_program(const ir::Module& fused, const Options& options,
                                       std::vector<CallSiteInfo>* expected_arity);

namespace detail {
struct Callee;
/// The program for an already planned module; `callees[s]` is the callee of `plan.steps[s]`.
/// (Used by the C emitter, which has both at hand.)
ExecutorProgram executor_program(const StoragePlan& plan, const std::vector<const Callee*>& callees,
                                 const Options& options);
}  // namespace detail

}  // namespace aotfuzz::aot

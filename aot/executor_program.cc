// Building the executor program: the storage plan's steps turned into argument slots, with the
// call-site bug switches applied exactly where the C emitter used to apply them.
#include "aot/executor_program.h"

#include <algorithm>

#include "aot/codegen_error.h"
#include "aot/codegen_internal.h"

namespace aotfuzz::aot {
namespace detail {

ExecutorProgram executor_program(const StoragePlan& plan, const std::vector<const Callee*>& callees,
                                 const CodegenOptions& options) {
  if (callees.size() != plan.steps.size()) {
    throw CodegenError("internal: " + std::to_string(plan.steps.size()) + " planned calls but " +
                       std::to_string(callees.size()) + " callees");
  }
  ExecutorProgram program;
  program.inputs = plan.inputs;
  program.outputs = plan.outputs;
  program.copies = plan.copies;
  program.buffers = plan.buffers;
  program.workspace_bytes = plan.workspace_bytes;
  const bool packed_api = options.api == CodegenOptions::Api::kPacked;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    // The slots of the previous call (what a stale slot still holds).
    const std::vector<TensorRef>* previous = s > 0 ? &program.calls[s - 1].slots : nullptr;
    const CallStep& step = plan.steps[s];
    const Callee& callee = *callees[s];
    ExecutorCall call;
    call.callee = callee.name;
    call.external = callee.external;
    call.packed = callee.external || packed_api;
    call.function = callee.fn;
    if (callee.external) {
      if (const auto* gv = ir::as<ir::GlobalVarNode>(step.call->callee())) {
        call.global_name = gv->name();
      }
    }
    call.callee_inputs = callee.inputs;
    call.callee_outputs = callee.outputs;
    call.call = step.call;
    // Inputs (per argument, each flattened field), then one slot per flattened result.
    for (std::size_t a = 0; a < step.args.size(); ++a) {
      const auto& arg_refs = step.args[a];
      const bool tuple_arg = step.call->args()[a]->type()->is_tuple();
      for (std::size_t f = 0; f < arg_refs.size(); ++f) {
        if (call.packed && tuple_arg && f > 0 && options.bugs.on(Bug::kTupleArgFirstFieldOnly)) {
          break;  // Bug #9036: only the first field of a tuple argument is packed.
        }
        TensorRef slot = arg_refs[f];
        if (!call.packed && tuple_arg && f > 0 && options.bugs.on(Bug::kStaleUnpackedArg)) {
          // Bug: the slot of a later tuple field keeps what the previous call put there.
          const std::size_t pos = call.slots.size();
          slot.buffer = previous != nullptr && pos < previous->size() ? (*previous)[pos].buffer
                                                                      : arg_refs.front().buffer;
        }
        call.slots.push_back(std::move(slot));
      }
    }
    for (const auto& r : step.results) call.slots.push_back(r);
    if (call.packed) {
      program.stack_size = std::max(
          {program.stack_size, call.slots.size(), callee.inputs.size() + callee.outputs.size()});
    }
    program.calls.push_back(std::move(call));
  }
  return program;
}

}  // namespace detail

ExecutorProgram build_executor_program(const ir::Module& fused, const CodegenOptions& options) {
  return build_executor_program(fused, options, nullptr);
}

ExecutorProgram build_executor_program(const ir::Module& fused, const CodegenOptions& options,
                                       std::vector<CallSiteInfo>* expected_arity) {
  StorageOptions storage;
  storage.reuse = options.storage_reuse;
  storage.bugs = options.bugs;
  const StoragePlan plan = plan_storage(fused.main(), storage);
  const detail::CalleeTable table = detail::resolve_callees(fused, options.mod_name);
  if (table.calls.size() != plan.steps.size()) {
    throw CodegenError("internal: " + std::to_string(plan.steps.size()) + " planned calls but " +
                       std::to_string(table.calls.size()) + " resolved");
  }
  std::vector<const detail::Callee*> callees;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    if (table.calls[s] != plan.steps[s].call.get()) {
      throw CodegenError("internal: call order of the storage plan and the callee table differ");
    }
    callees.push_back(&table.callees[table.call_callee[s]]);
  }
  if (expected_arity != nullptr) *expected_arity = detail::expected_call_arity(table, options);
  return detail::executor_program(plan, callees, options);
}

}  // namespace aotfuzz::aot

// Building the executor program: the storage plan's steps turned into argument slots, with the
// call-site bug switches applied at the call sites, where the real bugs were.
#include "aot/executor_program.h"

#include <algorithm>
#include <type_traits>
#include <utility>

#include "aot/codegen_error.h"
#include "aot/codegen_internal.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
namespace {

// `x` moved out when `kMove`, else copied.
template <bool kMove, class T>
auto take(T& x) {
  if constexpr (kMove) {
    return std::move(x);
  } else {
    return x;
  }
}

// The program of `plan`, copied from it (`Plan` = const StoragePlan&) or moved out of it
// (`Plan` = StoragePlan, an rvalue).
template <class Plan>
ExecutorProgram make_program(Plan&& plan, const std::vector<const detail::Callee*>& callees,
                             const Options& options) {
  constexpr bool kMove = !std::is_reference_v<Plan>;
  if (callees.size() != plan.steps.size()) {
    throw CodegenError("internal: " + std::to_string(plan.steps.size()) + " planned calls but " +
                       std::to_string(callees.size()) + " callees");
  }
  ExecutorProgram program;
  program.inputs = take<kMove>(plan.inputs);
  program.outputs = take<kMove>(plan.outputs);
  program.constants = take<kMove>(plan.constants);
  program.copies = take<kMove>(plan.copies);
  program.buffers = take<kMove>(plan.buffers);
  program.workspace_bytes = plan.workspace_bytes;
  program.calls.reserve(plan.steps.size());
  const bool packed_api = options.api == Options::Api::kPacked;
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    // The slots of the previous call (what a stale slot still holds).
    const std::vector<TensorRef>* previous = s > 0 ? &program.calls[s - 1].slots : nullptr;
    auto& step = plan.steps[s];
    const detail::Callee& callee = *callees[s];
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
    std::size_t num_slots = step.results.size();
    for (const auto& arg_refs : step.args) num_slots += arg_refs.size();
    call.slots.reserve(num_slots);
    // Inputs (per argument, each flattened field), then one slot per flattened result.
    for (std::size_t a = 0; a < step.args.size(); ++a) {
      auto& arg_refs = step.args[a];
      const bool tuple_arg = step.call->args()[a]->type()->is_tuple();
      for (std::size_t f = 0; f < arg_refs.size(); ++f) {
        if (call.packed && tuple_arg && f > 0 && options.bugs.on(Bug::kTupleArgFirstFieldOnly)) {
          break;  // Bug #9036: only the first field of a tuple argument is packed.
        }
        // (Moving leaves a TensorRef's buffer in place: the stale slot below may still read it.)
        TensorRef slot = take<kMove>(arg_refs[f]);
        if (!call.packed && tuple_arg && f > 0 && options.bugs.on(Bug::kStaleUnpackedArg)) {
          // Bug: the slot of a later tuple field keeps what the previous call put there.
          const std::size_t pos = call.slots.size();
          slot.buffer = previous != nullptr && pos < previous->size() ? (*previous)[pos].buffer
                                                                      : arg_refs.front().buffer;
        }
        call.slots.push_back(std::move(slot));
      }
    }
    for (auto& r : step.results) call.slots.push_back(take<kMove>(r));
    if (!call.packed && !call.slots.empty() && options.bugs.on(Bug::kUnpackedExtraArg)) {
      // Bug: one more argument than the callee declares (its last one again).
      TensorRef extra = call.slots.back();
      call.slots.push_back(std::move(extra));
    }
    if (!call.packed && options.bugs.on(Bug::kIgnoredKernelError)) call.checks_return = false;
    if (call.packed && options.bugs.on(Bug::kDLTensorFieldsUnset)) {
      call.describes_intermediates = false;
    }
    if (call.packed) {
      program.stack_size = std::max(
          {program.stack_size, call.slots.size(), callee.inputs.size() + callee.outputs.size()});
    }
    call.call = take<kMove>(step.call);
    program.calls.push_back(std::move(call));
  }
  return program;
}

}  // namespace

namespace detail {

ExecutorProgram executor_program(const StoragePlan& plan, const std::vector<const Callee*>& callees,
                                 const Options& options) {
  return make_program(plan, callees, options);
}

}  // namespace detail

ExecutorProgram build_executor_program(const ir::Module& fused, const Options& options) {
  return build_executor_program(fused, options, nullptr);
}

ExecutorProgram build_executor_program(const ir::Module& fused, const Options& options,
                                       std::vector<CallSiteInfo>* expected_arity) {
  detail::PlannedCalls planned = detail::plan_calls(fused, options);
  if (expected_arity != nullptr) {
    *expected_arity = detail::expected_call_arity(planned.table, options);
  }
  // The program takes the plan's vectors; the callees it points to stay in `planned.table`.
  return make_program(std::move(planned.plan), planned.step_callees, options);
}

}  // namespace aotfuzz::aot

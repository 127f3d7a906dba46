#include "oracle/workspace.h"

#include <vector>

namespace aotfuzz::oracle {
namespace {

// One tensor's stay in a buffer: the call that wrote it, and the last call that read it (the
// writer itself when nothing reads it: the planner frees such a buffer right after its writer).
struct Occupant {
  int written = 0;
  int last_read = 0;
};

bool in_workspace(const aot::TensorRef& ref, std::size_t num_buffers) {
  return ref.buffer.kind == aot::BufferKind::kIntermediate && ref.buffer.index >= 0 &&
         static_cast<std::size_t>(ref.buffer.index) < num_buffers;
}

}  // namespace

std::optional<Verdict> check_workspace_reuse(const aot::ExecutorProgram& program) {
  for (const auto& call : program.calls) {
    if (call.num_args() != call.callee_arity()) return std::nullopt;
  }
  const std::size_t num_buffers = program.buffers.size();
  // Every occupant of every buffer, in call order.
  std::vector<std::vector<Occupant>> occupants(num_buffers);
  for (std::size_t s = 0; s < program.calls.size(); ++s) {
    const aot::ExecutorCall& call = program.calls[s];
    const int step = static_cast<int>(s);
    const std::size_t num_inputs = call.callee_inputs.size();
    for (std::size_t k = 0; k < call.slots.size(); ++k) {
      const aot::TensorRef& ref = call.slots[k];
      if (!in_workspace(ref, num_buffers)) continue;
      auto& list = occupants[static_cast<std::size_t>(ref.buffer.index)];
      if (k >= num_inputs) {
        list.push_back(Occupant{step, step});
      } else if (!list.empty()) {
        // A read before any write is a wrong value, which the run shows; it frees nothing here.
        list.back().last_read = step;
      }
    }
  }
  // Replay the writes in order; `seen[b]` counts buffer b's occupants so far (0: not opened).
  std::vector<std::size_t> seen(num_buffers, 0);
  for (std::size_t s = 0; s < program.calls.size(); ++s) {
    const aot::ExecutorCall& call = program.calls[s];
    const int step = static_cast<int>(s);
    for (std::size_t k = call.callee_inputs.size(); k < call.slots.size(); ++k) {
      const aot::TensorRef& ref = call.slots[k];
      if (!in_workspace(ref, num_buffers)) continue;
      const auto b = static_cast<std::size_t>(ref.buffer.index);
      if (seen[b]++ > 0) continue;
      const std::size_t bytes = program.buffers[b].bytes;
      for (std::size_t c = 0; c < num_buffers; ++c) {
        if (c == b || seen[c] == 0 || program.buffers[c].bytes < bytes) continue;
        const Occupant& now = occupants[c][seen[c] - 1];
        if (now.written < step && now.last_read < step) {
          return Verdict{Stage::kCodegen,
                         WorkspaceOversized{step + 1, call.callee, static_cast<int>(b), bytes,
                                            static_cast<int>(c), program.buffers[c].bytes,
                                            now.last_read + 1, program.workspace_bytes}};
        }
      }
    }
  }
  return std::nullopt;
}

}  // namespace aotfuzz::oracle

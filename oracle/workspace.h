// The workspace oracle: with storage reuse on, the executor never opens a new workspace buffer
// while an older one that is large enough holds nothing live. Outputs cannot show a planner that
// stops reusing dead buffers; only the workspace the application must provide grows, which is
// what a microcontroller deployment runs out of first.
#pragma once

#include <optional>

#include "aot/executor_program.h"
#include "oracle/verdict.h"

namespace aotfuzz::oracle {

/// Reads each workspace buffer's occupants off `program` alone (a call's result slot starts an
/// occupant, its input slots keep the buffer's current occupant live through that call), and
/// returns a workspace-oversized verdict at the first result slot that opens a new buffer while
/// an older buffer of at least its size is dead: its occupant's last reader ran before this
/// call, or it never had a reader and was written by an earlier call. nullopt when there is no
/// such slot, or when some call's slots are not its callee's arity (arity's verdict, not this
/// one).
std::optional<Verdict> check_workspace_reuse(const aot::ExecutorProgram& program);

}  // namespace aotfuzz::oracle

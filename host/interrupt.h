// Clean stops: SIGINT/SIGTERM set a flag that campaigns and reductions poll; a second signal
// gets the default action (the process dies at once).
#pragma once

#include <atomic>

namespace aotfuzz::host {

/// Installs the handlers (idempotent) and returns the flag they set. The handler only stores to
/// the lock-free atomic flag; it is installed with SA_RESETHAND, so the next signal is fatal.
const std::atomic<bool>& install_interrupt_handler();

}  // namespace aotfuzz::host

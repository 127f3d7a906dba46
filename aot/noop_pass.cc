// Requires: a valid module. Ensures: the same module, verified as every pass's output is.
#include "aot/noop_pass.h"

#include "aot/pass_guard.h"

namespace aotfuzz::aot {

ir::Module noop_pass(const ir::Module& input, const Options& options) {
  return guarded_pass("noop", input, options.verify_input, [](const ir::Module& m) { return m; });
}

}  // namespace aotfuzz::aot

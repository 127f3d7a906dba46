// What one call of the AoT executor passes: the unit the static and dynamic arity checks compare
// (aot/codegen.h derives the expected ones from the IR; the emitter's internals plan them).
#pragma once

#include <string>

namespace aotfuzz::aot {

/// One call of the AoT executor, in the executor's call order.
struct CallSiteInfo {
  std::string callee;
  /// The argument count: the packed `num_args`, or the number of arguments of a direct call.
  int num_args = 0;
  /// Whether the call uses the packed convention (`stack_value`, `stack_tcode`, `num_args`).
  bool packed = true;
  friend bool operator==(const CallSiteInfo&, const CallSiteInfo&) = default;
};

}  // namespace aotfuzz::aot

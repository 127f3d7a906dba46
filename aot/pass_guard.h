// The common frame of every pass: verify the input, run, turn IR errors raised while building the
// output into PassError(kBrokenOutput), verify the output.
#pragma once

#include <functional>
#include <string>

#include "aot/pass_error.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// Runs `body` on `input` as pass `name`. Throws ir::VerifyError when `input` is invalid (checked
/// only with `verify_input`),
/// PassError as raised by `body`, and PassError(kBrokenOutput) when `body` raises any other
/// ir::Error or its result fails ir::verify().
ir::Module guarded_pass(const std::string& name, const ir::Module& input, bool verify_input,
                        const std::function<ir::Module(const ir::Module&)>& body);

}  // namespace aotfuzz::aot

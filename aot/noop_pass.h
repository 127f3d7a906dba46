// A pass that returns its input. Only test builds (AOTFUZZ_TEST_NOOP_PASS) list it in
// passes.def, to prove that a row and a file are all a new pass needs.
#pragma once

#include "aot/options.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// Requires: a valid module. Ensures: the same module.
ir::Module noop_pass(const ir::Module& input, const Options& options);

}  // namespace aotfuzz::aot

// main.c of a program around TVM's generated C (`--sut tvm`).
#pragma once

#include <string>

#include "aot/options.h"

namespace aotfuzz::tvm {

/// The harness's main.c over TVM's own runtime headers (the standalone CRT's include directory),
/// with the platform functions TVM's CRT leaves to the application (tvm/platform.c: workspace
/// from the heap, filled with 0xCD so that reading storage nobody wrote shows),
/// `#include "<header_name>"` for the c interface or the packed entry point's prototype, then
/// `case_part` (oracle::foreign_harness_main_c).
std::string tvm_harness_main_c(const aot::Options& options, const std::string& header_name,
                               const std::string& case_part);

}  // namespace aotfuzz::tvm

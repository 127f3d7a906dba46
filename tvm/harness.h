// The harness of a program around TVM's generated C (`--sut tvm`): main.c and the part cases share.
#pragma once

#include <string>

#include "aot/options.h"

namespace aotfuzz::tvm {

/// The harness's part every case of a TVM build shares (oracle::foreign_harness_support_c): TVM's
/// runtime headers (the standalone CRT's include directory) and the platform functions TVM's CRT
/// leaves to the application (tvm/platform.c: workspace from the heap, filled with 0xCD so that
/// reading storage nobody wrote shows).
std::string tvm_harness_support_c();

/// The case's main.c over TVM's runtime headers: `#include "<header_name>"` for the c interface or
/// the packed entry point's prototype, then `case_part` (oracle::foreign_harness_case_c).
std::string tvm_harness_main_c(const aot::Options& options, const std::string& header_name,
                               const std::string& case_part);

/// The file name of tvm_harness_support_c among a program's files.
inline constexpr const char* kTvmHarnessSupportName = "aotfuzz_harness.c";

}  // namespace aotfuzz::tvm

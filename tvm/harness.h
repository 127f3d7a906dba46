// The harness of a program around TVM's generated C (`--sut tvm`): main.c and the part cases share.
#pragma once

#include <string>
#include <vector>

#include "aot/options.h"
#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/harness.h"
#include "tvm/c_interface_header.h"

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

/// The case's call of TVM's C interface entry point (oracle::harness_code_c's CallWriter) with the
/// parameters `header` declares, in its order: the inputs and outputs structs (the fields named
/// as the builtin pipeline names them, so that a header that names them otherwise does not
/// compile), each pool of `struct <prefix>_workspace_pools` from aotfuzz_harness_pool (aligned
/// to `memory`'s workspace or constant alignment; a constant pool filled from its data macro),
/// and the devices struct (its pointers NULL: the C target has no device). With map_inputs and
/// map_outputs (workspace-io) the inputs are copied to where map_inputs says, the outputs'
/// pre-filled bytes to where map_outputs says, and after the call the outputs back, so that the
/// harness's checks and report see them as any other outputs. Throws HeaderError for a header the
/// harness cannot serve (more pools than it has, inputs mapped without outputs), and what
/// reference::c_interface_input_names throws for names TVM's C interface refuses.
oracle::CallWriter tvm_c_interface_call(const ir::Module& annotated, const aot::Options& options,
                                        const oracle::MemoryOptions& memory,
                                        const InterfaceHeader& header);

/// The file name of tvm_harness_support_c among a program's files.
inline constexpr const char* kTvmHarnessSupportName = "aotfuzz_harness.c";

}  // namespace aotfuzz::tvm

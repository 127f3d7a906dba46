// The C runtime header (aotfuzz_runtime.h) that generated code and test harnesses include.
#pragma once

#include <string_view>

namespace aotfuzz::aot {

/// The header's file name, as generated code includes it.
inline constexpr std::string_view kRuntimeHeaderName = "aotfuzz_runtime.h";

/// The text of aotfuzz_runtime.h (aot/c/aotfuzz_runtime.h): our own C99 subset of TVM's C runtime
/// interface (TVMValue, DLDevice, DLDataType, DLTensor, TVM's argument type codes, the
/// packed-function signature TVMBackendPackedCFunc), the workspace functions the application
/// provides (TVMBackendAllocWorkspace, TVMBackendFreeWorkspace), the call-trace hook
/// AOTFUZZ_TRACE_CALL(name, num_args) and the harness's other instrumentation (fault points,
/// descriptor poison, argument-check reports; AOTFUZZ_DEFINE_FAULTS defines their state).
///
/// Tracing: compiled with -DAOTFUZZ_TRACE, the hook appends the line "<name> <num_args>\n" to
/// `aotfuzz_trace_file` (declared extern here; one translation unit, the harness, writes
/// `AOTFUZZ_DEFINE_TRACE_FILE;` at file scope and opens it) and flushes it, so the trace survives a
/// crash. Without AOTFUZZ_TRACE the hook only evaluates `(void)(num_args)` (which also keeps an
/// otherwise unused num_args parameter from warning) and AOTFUZZ_DEFINE_TRACE_FILE declares
/// nothing that needs a definition.
std::string_view runtime_header_text();

}  // namespace aotfuzz::aot

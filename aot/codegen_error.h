// The error raised when storage planning or C code generation meets a module it cannot compile.
#pragma once

#include "ir/error.h"

namespace aotfuzz::aot {

/// A module the backend cannot compile (an unfused operator in @main, an unknown callee, a
/// variable that is not a parameter, an invalid module name ...): a "pipeline error", never a
/// crash. The message names the offending node or option.
class CodegenError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// An input TVM refuses at code generation, with TVM's reason (input names that are one C name
/// after sanitizing): invalid input, as a pass's PassError(kRejectedInput), not a pipeline error.
class CodegenRefusal : public CodegenError {
 public:
  using CodegenError::CodegenError;
};

}  // namespace aotfuzz::aot

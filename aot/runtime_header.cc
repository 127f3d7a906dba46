// The C runtime header text.
#include "aot/runtime_header.h"

#include "aot/c/aotfuzz_runtime_h.h"

namespace aotfuzz::aot {

std::string_view runtime_header_text() { return kRuntimeHeaderText; }

}  // namespace aotfuzz::aot

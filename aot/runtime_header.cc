// The C runtime header text and a writer for it.
#include "aot/runtime_header.h"

#include <cerrno>
#include <fstream>
#include <system_error>

#include "aot/c/aotfuzz_runtime_h.h"

namespace aotfuzz::aot {

std::string_view runtime_header_text() { return kRuntimeHeaderText; }

std::filesystem::path write_runtime_header(const std::filesystem::path& dir) {
  std::filesystem::path path = dir / kRuntimeHeaderName;
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (out) {
    out.write(kRuntimeHeaderText.data(), static_cast<std::streamsize>(kRuntimeHeaderText.size()));
  }
  out.close();
  if (!out) {
    throw std::filesystem::filesystem_error("cannot write the runtime header", path,
                                            std::error_code(errno, std::generic_category()));
  }
  return path;
}

}  // namespace aotfuzz::aot

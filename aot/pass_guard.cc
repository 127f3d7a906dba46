// Input and output verification around each pass (the out-of-line parts of guarded_pass).
#include "aot/pass_guard.h"

#include "ir/verify.h"

namespace aotfuzz::aot::detail {

void verify_pass_input(const ir::Module& input) { ir::verify(input); }

void throw_build_failure(const std::string& name, const ir::Error& e) {
  throw PassError(name, PassError::Kind::kBrokenOutput,
                  std::string("failed while building its output: ") + e.what());
}

void verify_pass_output(const std::string& name, const ir::Module& output) {
  try {
    ir::verify(output);
  } catch (const ir::Error& e) {
    throw PassError(name, PassError::Kind::kBrokenOutput,
                    std::string("produced an invalid module: ") + e.what());
  }
}

}  // namespace aotfuzz::aot::detail

// Input and output verification around each pass.
#include "aot/pass_guard.h"

#include "ir/verify.h"

namespace aotfuzz::aot {

ir::Module guarded_pass(const std::string& name, const ir::Module& input, bool verify_input,
                        const std::function<ir::Module(const ir::Module&)>& body) {
  if (verify_input) ir::verify(input);
  ir::Module output;
  try {
    output = body(input);
  } catch (const PassError&) {
    throw;
  } catch (const ir::Error& e) {
    throw PassError(name, PassError::Kind::kBrokenOutput,
                    std::string("failed while building its output: ") + e.what());
  }
  try {
    ir::verify(output);
  } catch (const ir::Error& e) {
    throw PassError(name, PassError::Kind::kBrokenOutput,
                    std::string("produced an invalid module: ") + e.what());
  }
  return output;
}

}  // namespace aotfuzz::aot

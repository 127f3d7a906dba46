// The one switch on a system's name.
#include "systems/systems.h"

#include <stdexcept>

#include "tvm/system.h"

namespace aotfuzz::systems {

std::vector<std::string> system_names() { return {"builtin", "tvm"}; }

std::shared_ptr<const oracle::SystemUnderTest> make_system(const oracle::SutSpec& spec) {
  if (spec.name == "builtin") {
    // A home given with the builtin pipeline would not be read: a mistake, on every path.
    if (!spec.home.empty()) throw std::invalid_argument("--tvm-home is for --sut tvm");
    if (!spec.fixed_home.empty()) throw std::invalid_argument("--tvm-fixed-home is for --sut tvm");
    return oracle::builtin_system();
  }
  if (spec.name == "tvm") return tvm::make_tvm_system(spec);
  throw std::invalid_argument("--sut: builtin or tvm, got " + spec.name);
}

std::string_view built_system_name() { return "tvm"; }

std::shared_ptr<const oracle::SystemUnderTest> make_built_system(const std::string& home) {
  return make_system({std::string(built_system_name()), home, ""});
}

oracle::CaseOptions parse_case_flags(std::string_view flags) {
  return oracle::parse_case_flags(flags, make_system);
}

}  // namespace aotfuzz::systems

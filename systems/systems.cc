// The one switch on a system's name.
#include "systems/systems.h"

#include <stdexcept>

#include "tvm/system.h"

namespace aotfuzz::systems {

std::vector<std::string> system_names() { return {"builtin", "tvm"}; }

std::shared_ptr<const oracle::SystemUnderTest> make_system(const oracle::SutSpec& spec) {
  // The builtin pipeline has no home: one given with it is not read, as on the command line.
  if (spec.name == "builtin") return oracle::builtin_system();
  if (spec.name == "tvm") return tvm::make_tvm_system(spec);
  throw std::invalid_argument("--sut: builtin or tvm, got " + spec.name);
}

oracle::CaseOptions parse_case_flags(std::string_view flags) {
  return oracle::parse_case_flags(flags, make_system);
}

}  // namespace aotfuzz::systems

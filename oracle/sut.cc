// What every system under test shares.
#include "oracle/sut.h"

#include "host/shell_words.h"

namespace aotfuzz::oracle {

const SystemUnderTest& system_of(const CaseOptions& options) {
  return options.sut ? *options.sut : *builtin_system();
}

std::string sut_replay_flags(const SystemUnderTest& system) {
  const SutSpec& spec = system.spec();
  if (spec.name == SutSpec().name) return "";
  std::string f = " --sut " + host::shell_quote(spec.name);
  if (!spec.home.empty() && !system.home_flag().empty()) {
    f += " --" + std::string(system.home_flag()) + " " + host::shell_quote(spec.home);
  }
  return f;
}
}  // namespace aotfuzz::oracle

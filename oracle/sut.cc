// System-under-test names.
#include "oracle/sut.h"

namespace aotfuzz::oracle {

std::optional<SutKind> parse_sut_kind(std::string_view name) {
  if (name == "builtin") return SutKind::kBuiltin;
  if (name == "tvm") return SutKind::kTvm;
  return std::nullopt;
}

}  // namespace aotfuzz::oracle

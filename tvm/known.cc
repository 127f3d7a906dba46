// The rules of TVM's known behaviours (tvm/known.def) and the release they apply to.
#include "tvm/known.h"

#include <cctype>
#include <stdexcept>
#include <string>

namespace aotfuzz::tvm {
namespace {

// A cpacked call passes num_args one below what its callee reads (TVM PR #14015).
bool packed_call_one_short(const ArityObservation& call) {
  return call.site.packed && call.site.num_args + 1 == call.takes;
}

// The AoT executor calls an external function directly (the unpacked API) whose definition is
// packed, as the ccompiler defines every region.
bool direct_call_of_packed_definition(const ArityObservation& call) {
  return !call.site.packed && call.callee_packed;
}

// A row's release; a row that names no release is a mistake in the table, not input.
Release release_of(std::string_view text) {
  const auto r = parse_release(text);
  if (!r) throw std::logic_error("tvm/known.def: no release in '" + std::string(text) + "'");
  return *r;
}

KnownBehaviour row(std::string_view id, KnownKind kind, std::string_view since,
                   std::string_view until, std::string_view source,
                   bool (*rule)(const ArityObservation&), KnownRun run, std::string_view what) {
  KnownBehaviour b{id,   kind, release_of(since), std::nullopt, source,
                   what, rule, run == KnownRun::kUndefined};
  if (!until.empty()) b.until = release_of(until);
  return b;
}

const std::vector<KnownBehaviour>& table() {
  static const std::vector<KnownBehaviour> rows = {
#define AOTFUZZ_TVM_KNOWN(id, kind, since, until, source, rule, run, what) \
  row(id, KnownKind::kind, since, until, source, rule, KnownRun::run, what),
#include "tvm/known.def"
#undef AOTFUZZ_TVM_KNOWN
  };
  return rows;
}

}  // namespace

std::optional<Release> parse_release(std::string_view version) {
  Release r;
  std::size_t i = 0;
  auto number = [&](int& into) {
    const std::size_t start = i;
    into = 0;
    while (i < version.size() && std::isdigit(static_cast<unsigned char>(version[i])) != 0 &&
           i - start < 6) {
      into = into * 10 + (version[i] - '0');
      ++i;
    }
    return i > start;
  };
  if (!number(r.major) || i >= version.size() || version[i] != '.') return std::nullopt;
  ++i;
  if (!number(r.minor)) return std::nullopt;
  // What may follow: ".patch", ".devN", "rcN", "+local".
  if (i < version.size() && version[i] != '.' && version[i] != '+' && version[i] != 'r') {
    return std::nullopt;
  }
  return r;
}

bool disagrees(const ArityObservation& call) {
  return call.site.num_args != call.takes || (!call.site.packed && call.callee_packed);
}

std::span<const KnownBehaviour> known_behaviours() { return table(); }

const KnownBehaviour* explain_arity(const std::vector<ArityObservation>& calls,
                                    const Release& release) {
  const KnownBehaviour* found = nullptr;
  for (const ArityObservation& call : calls) {
    if (!disagrees(call)) continue;
    const KnownBehaviour* explains = nullptr;
    for (const KnownBehaviour& b : table()) {
      if (b.explains_call != nullptr && b.applies_to(release) && b.explains_call(call)) {
        explains = &b;
        break;
      }
    }
    if (explains == nullptr) return nullptr;
    if (found != nullptr && found != explains) return nullptr;
    found = explains;
  }
  return found;
}

}  // namespace aotfuzz::tvm

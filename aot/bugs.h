// Bug-injection switches (the catalogue is aot/bugs.def): all off by default.
#pragma once

#include <bitset>
#include <optional>
#include <string_view>
#include <vector>

namespace aotfuzz::aot {

/// One enumerator per row of bugs.def.
enum class Bug : unsigned {
#define AOTFUZZ_BUG(id, name, stage, description) id,
#include "aot/bugs.def"
#undef AOTFUZZ_BUG
  kCount
};

/// A row of the catalogue.
struct BugInfo {
  Bug bug;
  std::string_view name;
  std::string_view stage;
  std::string_view description;
};

/// Every bug, in catalogue order.
inline const std::vector<BugInfo>& bug_table() {
  static const std::vector<BugInfo> kTable = {
#define AOTFUZZ_BUG(id, name, stage, description) {Bug::id, name, stage, description},
#include "aot/bugs.def"
#undef AOTFUZZ_BUG
  };
  return kTable;
}

/// The bug whose CLI name is `name`.
inline std::optional<Bug> parse_bug(std::string_view name) {
  for (const auto& row : bug_table()) {
    if (row.name == name) return row.bug;
  }
  return std::nullopt;
}

/// The switches in force for one pipeline run.
class BugSet {
 public:
  BugSet() = default;
  BugSet& enable(Bug bug) {
    bits_.set(static_cast<unsigned>(bug));
    return *this;
  }
  bool on(Bug bug) const { return bits_.test(static_cast<unsigned>(bug)); }
  bool any() const { return bits_.any(); }

 private:
  std::bitset<static_cast<unsigned>(Bug::kCount)> bits_;
};

}  // namespace aotfuzz::aot

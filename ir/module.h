// A module: named global functions in a fixed order (the order the text form prints).
#pragma once

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/expr.h"

namespace aotfuzz::ir {

/// A value type holding immutable functions; copying is cheap (shared nodes).
class Module {
 public:
  /// Appends `fn` as `@name`. Throws VerifyError if the name is taken.
  void add(const std::string& name, Function fn);
  /// Replaces the function named `name` (keeping its position). Throws if absent.
  void replace(const std::string& name, Function fn);
  /// The function `@name`, or nullptr.
  const Function* find(const std::string& name) const;
  /// The position of `@name` in functions(), or size() when there is none.
  std::size_t index_of(const std::string& name) const;
  /// `@main`; throws VerifyError if the module has none.
  const Function& main() const;
  /// A GlobalVar for `@name` typed as that function. Throws VerifyError if absent.
  GlobalVar global_var(const std::string& name) const;
  const std::vector<std::pair<std::string, Function>>& functions() const { return functions_; }
  std::size_t size() const { return functions_.size(); }

 private:
  // Modules are copied and rebuilt by every pass and most hold a handful of functions, where a
  // scan beats hashing and the map's per-entry allocations; the name index exists only from
  // this many functions on, so large modules still look names up in constant time.
  static constexpr std::size_t kIndexFrom = 16;
  std::vector<std::pair<std::string, Function>> functions_;
  std::unordered_map<std::string, std::size_t> index_;
};

}  // namespace aotfuzz::ir

// Comparing modules as text, for verdicts that show how two modules differ (structure, fidelity).
#pragma once

#include <string>

#include "ir/module.h"

namespace aotfuzz::oracle {

/// The module's text with its functions in name order: two modules print the same exactly when
/// they hold the same functions under the same names, alpha-equivalent, parameter names included.
std::string print_by_name(const ir::Module& module);

/// print_by_name with each global function's attributes in key order: TVM keeps them in a Map,
/// whose printed order says nothing (v0.8 prints Inline first, v0.18 Compiler first), so the
/// comparison with TVM's module must not see it.
std::string print_by_name_and_key(const ir::Module& module);

/// A unified diff of two texts (three lines of context), empty when they are equal.
std::string unified_diff(const std::string& a, const std::string& b, const std::string& a_name,
                         const std::string& b_name);

}  // namespace aotfuzz::oracle

// Comparing modules as text, for verdicts that show how two modules differ (structure, fidelity).
#pragma once

#include <string>

#include "ir/module.h"

namespace aotfuzz::oracle {

/// The module's text with its functions in name order: two modules print the same exactly when
/// they hold the same functions under the same names, alpha-equivalent, parameter names included.
std::string print_by_name(const ir::Module& module);

/// A unified diff of two texts (three lines of context), empty when they are equal.
std::string unified_diff(const std::string& a, const std::string& b, const std::string& a_name,
                         const std::string& b_name);

}  // namespace aotfuzz::oracle

// Test support: the name of an injectable bug, for test names and messages.
#pragma once

#include <string_view>

#include "aot/bugs.h"

namespace aotfuzz::test_support {

/// The bug's row name in aot::bug_table(), as --inject spells it.
inline std::string_view bug_name(aot::Bug bug) {
  return aot::bug_table()[static_cast<unsigned>(bug)].name;
}

}  // namespace aotfuzz::test_support

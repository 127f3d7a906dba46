// `aotfuzz bugs`: the injectable bug catalogue (aot/bugs.def).
#include <cstdio>

#include "aot/bugs.h"
#include "cli/common.h"

namespace aotfuzz::cli {

Command register_bugs(CLI::App& parent) {
  Command c;
  c.app = parent.add_subcommand("bugs", "List the injectable bugs (for --inject NAME)");
  c.run = [] {
    for (const auto& row : aot::bug_table()) {
      std::printf("%-26.*s %-10.*s %.*s\n", static_cast<int>(row.name.size()), row.name.data(),
                  static_cast<int>(row.stage.size()), row.stage.data(),
                  static_cast<int>(row.description.size()), row.description.data());
    }
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli

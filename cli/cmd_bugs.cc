// `aotfuzz bugs`: the injectable bug catalogue (aot/bugs.def).
#include <algorithm>
#include <cstdio>
#include <memory>

#include <nlohmann/json.hpp>

#include "aot/bugs.h"
#include "cli/common.h"

namespace aotfuzz::cli {

Command register_bugs(CLI::App& parent) {
  auto json = std::make_shared<bool>(false);
  Command c;
  c.app = parent.add_subcommand("bugs", "List the injectable bugs (for --inject NAME)");
  c.app->add_flag("--json", *json, "Print the catalogue as a JSON array of {name, stage, description}");
  c.run = [json] {
    if (*json) {
      nlohmann::json out = nlohmann::json::array();
      for (const auto& row : aot::bug_table()) {
        out.push_back({{"name", std::string(row.name)},
                       {"stage", std::string(row.stage)},
                       {"description", std::string(row.description)}});
      }
      std::printf("%s\n", out.dump(2).c_str());
      return kOk;
    }
    // Columns as wide as their longest entry: a long name never pushes its row out of line.
    std::size_t name_width = 4, stage_width = 5;
    for (const auto& row : aot::bug_table()) {
      name_width = std::max(name_width, row.name.size());
      stage_width = std::max(stage_width, row.stage.size());
    }
    std::printf("%-*s %-*s %s\n", static_cast<int>(name_width), "name",
                static_cast<int>(stage_width), "stage", "description");
    for (const auto& row : aot::bug_table()) {
      std::printf("%-*.*s %-*.*s %.*s\n", static_cast<int>(name_width),
                  static_cast<int>(row.name.size()), row.name.data(),
                  static_cast<int>(stage_width), static_cast<int>(row.stage.size()),
                  row.stage.data(), static_cast<int>(row.description.size()),
                  row.description.data());
    }
    return kOk;
  };
  return c;
}

}  // namespace aotfuzz::cli

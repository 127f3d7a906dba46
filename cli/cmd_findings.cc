// `aotfuzz findings DIR`: the bundles of a findings directory across the campaigns that wrote
// into it, and (--rerun) whether each still reproduces with this build.
#include <cstdio>
#include <iostream>

#include "cli/common.h"
#include "fuzz/findings_list.h"

namespace aotfuzz::cli {

Command register_findings(CLI::App& parent) {
  struct Opts {
    std::string dir;
    bool json = false;
    bool rerun = false;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "findings", "List the bundles of a findings directory: signature, first and last seen, "
                  "hits, reduced size, and with --rerun whether each still reproduces");
  c.app->add_option("DIR", opts->dir, "Findings directory")->required()->check(CLI::ExistingDirectory);
  c.app->add_flag("--json", opts->json, "Print a JSON array instead of the table");
  c.app->add_flag("--rerun", opts->rerun,
                  "Replay every bundle's reduced graph with this build; a bundle that no longer "
                  "gives its verdict is marked fixed (in its seen.json); exit 1 while any "
                  "reproduces");
  c.run = [opts] {
    require_findings_dir(opts->dir, "findings");
    std::vector<fuzz::BundleSummary> bundles;
    try {
      bundles = fuzz::list_bundles(opts->dir);
    } catch (const std::system_error& e) {
      throw CommandError(kBadInput, e.what());
    }
    bool any_reproduces = false;
    if (opts->rerun) {
      for (auto& b : bundles) {
        try {
          fuzz::rerun_bundle(b);
        } catch (const std::system_error& e) {
          throw CommandError(kInternal, e.what());
        }
        any_reproduces = any_reproduces || *b.reproduces;
      }
    }
    if (opts->json) {
      std::cout << fuzz::to_json(bundles).dump(2) << "\n";
    } else {
      std::cout << fuzz::findings_table(bundles);
      std::cout << "findings: " << bundles.size() << " bundles in " << opts->dir << "\n";
    }
    return static_cast<int>(any_reproduces ? kFinding : kOk);
  };
  return c;
}

}  // namespace aotfuzz::cli

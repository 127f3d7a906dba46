// `aotfuzz findings DIR`: the bundles of a findings directory across the campaigns that wrote
// into it, and (--rerun) whether each still reproduces with this build.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <optional>
#include <stdexcept>

#include "cli/common.h"
#include "bundles/findings_list.h"
#include "bundles/triage.h"

namespace aotfuzz::cli {

Command register_findings(CLI::App& parent) {
  struct Opts {
    std::string dir;
    bool json = false;
    bool rerun = false;
    std::vector<std::string> tvm_builds;
    std::string tvm_builds_file;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "findings",
      "List the bundles of a findings directory: signature, first and last seen, "
      "hits, reduced size, and with --rerun whether each still reproduces");
  c.app->add_option("DIR", opts->dir, "Findings directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  c.app->add_flag("--json", opts->json, "Print a JSON array instead of the table");
  c.app->add_flag("--rerun", opts->rerun,
                  "Replay every bundle's reduced graph with this build; a bundle that no longer "
                  "gives its verdict is marked fixed (in its seen.json); exit 1 while any "
                  "reproduces, else 3 when one cannot be replayed here (cannot-run: no C "
                  "compiler, a TVM build that is gone)");
  c.app->add_option("--tvm-build", opts->tvm_builds,
                    "With --rerun: also replay every TVM finding on this TVM build, LABEL=DIR "
                    "(repeatable, oldest first): a matrix of bundles by builds, kept in each "
                    "bundle's verdict.json");
  c.app->add_option("--tvm-builds", opts->tvm_builds_file,
                    "With --rerun: the TVM builds from a file, one `LABEL DIR` per line");
  c.run = [opts] {
    require_findings_dir(opts->dir, "findings");
    const std::vector<bundles::TriageBuild> builds =
        triage_builds(opts->tvm_builds, opts->tvm_builds_file, "findings");
    if (!builds.empty() && !opts->rerun) {
      throw CommandError(kBadInput, "findings: --tvm-build and --tvm-builds need --rerun");
    }
    std::vector<bundles::BundleSummary> bundles;
    try {
      bundles = bundles::list_bundles(opts->dir);
    } catch (const std::system_error& e) {
      throw CommandError(kBadInput, e.what());
    }
    bool any_reproduces = false;
    bool any_cannot_run = false;
    if (opts->rerun) {
      for (auto& b : bundles) {
        bundles::rerun_bundle(b);
        any_reproduces = any_reproduces || b.reproduces.value_or(false);
        any_cannot_run = any_cannot_run || !b.cannot_run.empty();
        if (!b.record_error.empty()) {
          std::cerr << "aotfuzz findings: warning: the result for " << b.signature
                    << " is not recorded: " << b.record_error << "\n";
        }
      }
    }
    std::vector<std::optional<bundles::TriageRow>> rows;
    if (!builds.empty()) {
      bundles::Triage triage(builds);
      for (const auto& b : bundles) {
        rows.push_back(triage.row(b));
        if (!rows.back()) continue;
        try {
          bundles::record_triage(b, *rows.back());
        } catch (const std::exception& e) {
          throw CommandError(kInternal, std::string("findings: ") + e.what());
        }
      }
    }
    if (opts->json) {
      nlohmann::json j = bundles::to_json(bundles);
      for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i]) j[i]["triage"] = bundles::to_json(*rows[i]);
      }
      std::cout << j.dump(2) << "\n";
    } else {
      std::cout << bundles::findings_table(bundles);
      if (!builds.empty()) std::cout << "\n" << bundles::triage_table(bundles, rows, builds);
      std::cout << "findings: " << bundles.size() << " bundles in " << opts->dir << "\n";
    }
    if (any_reproduces) return static_cast<int>(kFinding);
    return static_cast<int>(any_cannot_run ? kInternal : kOk);
  };
  return c;
}

}  // namespace aotfuzz::cli

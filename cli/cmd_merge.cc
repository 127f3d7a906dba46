// `aotfuzz merge --into OUT DIR...`: the findings directories of shards, or of any campaigns, as
// one (bundles/merge_findings.h).
#include <iostream>

#include "cli/common.h"
#include "bundles/findings_list.h"
#include "bundles/merge_findings.h"
#include "bundles/status_files.h"
#include "report/html_report.h"
#include "report/sarif.h"

namespace aotfuzz::cli {

namespace {

// One SARIF result per bundle of the merged directory, located at its reduced.relay.
std::vector<fuzz::Finding> bundle_findings(const std::vector<bundles::BundleSummary>& bundles) {
  std::vector<fuzz::Finding> out;
  for (const auto& b : bundles) {
    fuzz::Finding f;
    f.signature = b.signature;
    f.summary = b.verdict_summary;
    f.replay = b.replay;
    f.bundle_dir = b.dir.string();
    f.bundle_written = true;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

Command register_merge(CLI::App& parent) {
  struct Opts {
    std::string into;
    std::vector<std::string> sources;
    std::string sarif;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "merge",
      "Merge the findings directories of shards (or of any campaigns) into one: a "
      "bundle per signature (the smallest reduced graph kept, every source's hits and "
      "campaigns counted, its graph as found under examples/), each source's campaign "
      "records and plot data under its own name, triage and bisection carried, and "
      "report.html over the whole. Merging a source again replaces what it gave; "
      "sources are only read");
  c.app->add_option("--into", opts->into, "The merged directory (created when missing)")
      ->required();
  c.app
      ->add_option("DIRS", opts->sources,
                   "Findings directories to merge; each is known by its directory's name")
      ->required();
  c.app->add_option("--sarif", opts->sarif,
                    "Also write a SARIF 2.1.0 log with one result per bundle of the merged "
                    "directory, at its reduced.relay");
  c.run = [opts] {
    for (const auto& s : opts->sources) require_findings_dir(s, "merge");
    namespace fs = std::filesystem;
    std::error_code ec;
    // An earlier merge's target (its lock file there) may hold no bundle yet.
    if (fs::exists(opts->into, ec) && !fs::is_empty(opts->into, ec) &&
        !fs::exists(fs::path(opts->into) / bundles::kMergeLockName, ec)) {
      require_findings_dir(opts->into, "merge");
    }
    check_output_dir(opts->into, "--into", "merge");
    if (!opts->sarif.empty()) check_output_file(opts->sarif, "--sarif", "merge");
    std::vector<fs::path> sources(opts->sources.begin(), opts->sources.end());
    bundles::MergeResult r;
    try {
      r = bundles::merge_findings(opts->into, sources, report::write_report_page);
    } catch (const bundles::MergeUsageError& e) {
      throw CommandError(kBadInput, std::string("merge: ") + e.what());
    } catch (const bundles::MergeBusy& e) {
      throw CommandError(kBadInput, std::string("merge: ") + e.what());
    } catch (const std::exception& e) {
      throw CommandError(kInternal, std::string("merge: ") + e.what());
    }
    if (!opts->sarif.empty()) {
      try {
        const auto log = report::sarif_log(AOTFUZZ_VERSION, {},
                                           bundle_findings(bundles::list_bundles(opts->into)));
        bundles::write_file_atomically(opts->sarif, log.dump(2) + "\n");
      } catch (const std::exception& e) {
        throw CommandError(kInternal, std::string("merge: ") + e.what());
      }
    }
    std::cout << "merge: " << sources.size() << (sources.size() == 1 ? " source" : " sources")
              << " into " << opts->into << ": " << r.signatures << " signatures (" << r.added
              << " new, " << r.replaced << " replaced by a smaller graph, " << r.updated
              << " updated), " << r.campaigns << " campaigns"
              << (r.changed ? "" : "; nothing changed") << "; report "
              << (fs::path(opts->into) / "report.html").string() << "\n";
    return static_cast<int>(kOk);
  };
  return c;
}

}  // namespace aotfuzz::cli

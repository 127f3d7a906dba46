// `aotfuzz merge --into OUT DIR...`: the findings directories of shards (or of any campaigns)
// brought together as if one campaign had found them. One bundle per signature, the smallest
// reduced graph kept; every source's hits and campaigns counted in seen.json; every source's
// graph as found kept under examples/; each source's campaign records, plot_data and
// fuzzer_stats kept under its own name; triage rows and bisections carried; report.html over the
// whole.
//
// A source is known by its directory's name (its label): merging it again replaces what it
// contributed before instead of adding to it, so merging twice changes nothing and a shard merged
// again after it ran on counts each case once. Sources are only read.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

namespace aotfuzz::bundles {

/// The file in the target that a merge holds an exclusive flock on while it writes.
inline constexpr const char* kMergeLockName = ".merge.lock";

/// The sources or the target cannot be merged as asked (a missing source, the target among the
/// sources, two sources of one name): bad usage.
class MergeUsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// Another merge holds the target's lock (`OUT/.merge.lock`).
class MergeBusy : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

/// What a merge did.
struct MergeResult {
  std::size_t signatures = 0;  ///< bundles in the target afterwards
  std::size_t added = 0;       ///< signatures new to the target
  std::size_t replaced = 0;    ///< bundles swapped for a source's smaller reduced graph
  std::size_t updated = 0;     ///< bundles kept whose counts, examples or triage changed
  std::size_t campaigns = 0;   ///< campaign records in the target afterwards
  bool changed = false;        ///< whether any file of the target changed
};

/// The name a source is known by in the target: its directory's name.
std::string merge_label(const std::filesystem::path& source);

/// Merges `sources` into `into` (created when missing; `into` as given is how the report and
/// the SARIF name it). Throws MergeUsageError for bad sources, MergeBusy when another merge is
/// writing into `into`, std::system_error when the target cannot be written. The target's files
/// are each replaced atomically; a bundle is swapped whole, so a reader or a kill sees the old
/// bundle or the new one.
/// Writes the target's report.html; runs under the target's lock when the merge changed something
/// or the page is missing (the page is a floor up: report/html_report.h).
using WriteReport = std::function<void(const std::filesystem::path& into)>;
MergeResult merge_findings(const std::filesystem::path& into,
                           const std::vector<std::filesystem::path>& sources,
                           const WriteReport& write_report = {});

}  // namespace aotfuzz::bundles

// Finding bundles: one directory per unique verdict signature, written atomically (built in a
// temporary sibling, then renamed), holding everything needed to replay, read and file a bug.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"

namespace aotfuzz::bundles {

/// Everything a bundle holds.
struct Bundle {
  std::string signature;
  /// Header lines of both .relay files (without the leading `// `), e.g. "origin: ...".
  std::vector<std::string> header;
  /// Header lines of reduced.relay only (how the reduction went): original.relay is the graph as
  /// found, and says nothing of a reduction.
  std::vector<std::string> reduced_header;
  /// The options the finding was seen with.
  oracle::CaseOptions options;
  ir::Module original;
  oracle::Verdict original_verdict;
  ir::Module reduced;
  /// run_case(reduced, options): its verdict, C files, inputs, expected and actual outputs.
  oracle::CaseResult reduced_result;
  /// Further replay lines for reduced.relay (flags, signature), e.g. the fixed pipeline's pass.
  std::vector<std::pair<std::string, std::string>> extra_replays;
  /// Facts merged into verdict.json under "info" (campaign seed, case, reduction figures).
  nlohmann::json info = nlohmann::json::object();
};

/// The directory name of a signature: every character outside [A-Za-z0-9-] becomes `_`
/// ("arity:codegen:kernel" -> "arity_codegen_kernel").
std::string bundle_dir_name(std::string_view signature);

/// `// <line>` for each header line, then the module's canonical text.
std::string relay_with_header(const ir::Module& module, const std::vector<std::string>& header);

/// `aotfuzz run <relay> <replay flags>`.
std::string replay_command(const std::string& relay_path, const oracle::CaseOptions& options);

/// The outcome of write_bundle.
struct BundleWriteResult {
  std::filesystem::path dir;  ///< findings/<bundle_dir_name(signature)>
  bool written = false;       ///< false: a bundle of that signature was already there
};

/// Holds an exclusive lock on a bundle directory (flock on the directory itself) while a writer
/// reads and rewrites one of its files: seen.json, a record in verdict.json, a reduction putting
/// its files in place. Another process updating the same bundle waits; a directory that cannot be
/// opened is not locked (its writes fail on their own).
class BundleLock {
 public:
  explicit BundleLock(const std::filesystem::path& bundle_dir);
  ~BundleLock();
  BundleLock(const BundleLock&) = delete;
  BundleLock& operator=(const BundleLock&) = delete;

 private:
  int fd_ = -1;
};

/// Whether a bundle's writer owns the file or folder `name` of a bundle: what write_bundle puts
/// there (the graphs, verdict.json, the run's files, c/, pictures, replay.txt). Everything else
/// (seen.json, bisect records, a user's notes) belongs to others and survives a replacement.
bool written_by_bundle_writer(std::string_view name);

/// Writes `bundle` as `findings_dir/<bundle_dir_name(signature)>/` with original.relay,
/// reduced.relay (headers with origin, finding and replay lines), verdict.json, inputs.txt,
/// expected.txt, actual.txt, c/ (the generated sources and harness), reduced.dot, original.dot,
/// reduced.svg (when Graphviz `dot` is installed) and replay.txt (the one-line command). It is
/// built in `findings_dir/.tmp-<pid>-XXXXXX` and renamed into place, so a killed campaign never
/// leaves a partial bundle. Creates `findings_dir` if needed. Throws std::system_error when the
/// directory cannot be written. With `replace`, an existing bundle of the signature gets the new
/// bundle's files, each replaced atomically, verdict.json last (so a kill midway leaves it
/// marked not fully reduced), the records others added to verdict.json kept; nothing else of the
/// bundle is touched (a reduced bundle replacing the unreduced one written first).
BundleWriteResult write_bundle(const std::filesystem::path& findings_dir, const Bundle& bundle,
                               bool replace = false);

/// The bundles in `findings_dir` whose reduction has not ended (verdict.json's
/// info.reduction.complete is false: the campaign was killed or stopped while reducing).
std::vector<std::filesystem::path> incomplete_bundles(const std::filesystem::path& findings_dir);

/// The whole file at `path`; throws std::system_error when it cannot be read.
std::string read_text_file(const std::filesystem::path& path);

/// The signatures of the complete bundles in `findings_dir` (read from their verdict.json), for
/// resuming a campaign. Removes temporary directories left by processes that no longer run.
/// A missing directory has none.
std::set<std::string> load_bundle_signatures(const std::filesystem::path& findings_dir);

}  // namespace aotfuzz::bundles

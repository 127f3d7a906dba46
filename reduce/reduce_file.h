// `aotfuzz reduce FILE` as a library: which flags and signature to keep (given, or read from the
// file's replay header), the reduction with its retry for injected bugs, and the header of the
// reduced file.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "bundles/replay.h"
#include "ir/error.h"
#include "ir/module.h"
#include "oracle/oracle.h"
#include "reduce/reducer.h"

namespace aotfuzz::reduce {

/// The file cannot be reduced as asked: its header is malformed, it does not give the signature,
/// or it gives no finding and no signature was named. what() is one line for the user.
class ReduceFileError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// What to reduce and what to keep.
struct ReduceFileRequest {
  /// The file's name (for messages and the reduced file's origin line), its text (for its
  /// replay header) and its graph.
  std::string file;
  std::string text;
  ir::Module module;
  /// The case options of the command line, and whether any pipeline flag was given there.
  /// Without one, the flags of the file's first finding line are used instead.
  oracle::CaseOptions options;
  bool flags_given = false;
  /// The command line's flags that adjust the file's flags rather than replace them (--sut,
  /// --no-run, ...; cli::setting_flags), applied over them.
  std::string settings;
  /// The signature to keep; empty keeps the verdict the file gives with the chosen flags.
  std::string signature;
  ReduceOptions reduce;
};

/// The decisions taken before reducing.
struct ReductionPlan {
  /// The options the file is run with, and the same as replay-line flags.
  oracle::CaseOptions options;
  std::string flags;
  /// The header line the flags came from, when they came from the file.
  std::optional<bundles::ReplayLine> flags_from;
  /// The signature to keep.
  std::string signature;
};

/// Chooses the flags (the command line's, or the file's first finding line when no pipeline flag
/// was given) and the signature (the request's, or the verdict the file gives). Throws
/// ReduceFileError for a malformed header or a file that gives no finding.
ReductionPlan plan_reduction(const ReduceFileRequest& request);

struct ReducedFile {
  ReduceResult result;
  /// The reduced graph with its header (origin, sizes, finding and replay line).
  std::string text;
};

/// Reduces the graph of `request` keeping `plan.signature`. When injected bugs are on and no
/// candidate keeps the finding while passing without them, it retries keeping the signature
/// alone. Throws ReduceFileError when the file does not give the signature.
ReducedFile reduce_file(const ReduceFileRequest& request, const ReductionPlan& plan);

/// The header lines of a reduced file: origin, sizes, finding, replay line.
std::vector<std::string> reduced_file_header(const std::string& file, const ReduceResult& result,
                                             const std::string& signature,
                                             const std::string& flags);

}  // namespace aotfuzz::reduce

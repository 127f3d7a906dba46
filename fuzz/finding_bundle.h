// The bundles of a campaign's findings (bundles/bundle.h): the graph as found and as reduced, with
// header lines saying where it came from and how far its reduction got, and the campaign's facts
// in verdict.json's info.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "bundles/bundle.h"
#include "fuzz/campaign_types.h"
#include "ir/module.h"
#include "oracle/oracle.h"
#include "reduce/reducer.h"

namespace aotfuzz::fuzz {

class FindingBundles {
 public:
  /// Bundles go to options.findings_dir.
  explicit FindingBundles(const CampaignOptions& options) : opt_(options) {}

  /// Writes the bundle of the finding `signature` of case `spec`: `reduced` (the original graph
  /// itself before reduction) under options `o`, as `red` reduced it, with `complete` saying
  /// whether its reduction has ended. `replace`: a bundle of the signature already there is
  /// swapped for this one. `prior`: the info of the bundle being resumed (its origin and
  /// campaign), else this campaign's. Throws std::system_error when it cannot be written.
  bundles::BundleWriteResult write(const CaseSpec& spec, const std::string& signature,
                                    const oracle::CaseOptions& o, const ir::Module& reduced,
                                    const reduce::ReduceResult& red, bool complete, bool replace,
                                    const nlohmann::json* prior = nullptr,
                                    const oracle::CaseResult* ran = nullptr) const;

  /// The first bundle of the new finding `f` of case `spec`: its graph as found, under the case's
  /// options, written before any reduction so that a kill at any later moment leaves it (marked
  /// not fully reduced unless `complete`) for the next campaign on the directory to reduce
  /// further. `f` gets the sizes, the bundle and its replay line; false (and `f.error`) when the
  /// bundle cannot be written. `ran`: the case's own result when it ran alone as run_case runs
  /// it (not in a batch), which the bundle then records instead of running the case again (for
  /// TVM, another build).
  bool write_first(const CaseSpec& spec, Finding& f, bool complete,
                   const oracle::CaseResult* ran = nullptr) const;

  /// The replay command of a case without a bundle: its graph from the generator, run with
  /// `flags`.
  std::string generator_replay(const CaseSpec& spec, const std::string& flags) const;

 private:
  std::string origin(const CaseSpec& spec, const nlohmann::json* prior) const;
  nlohmann::json campaign_info(const CaseSpec& spec, const std::string& origin) const;

  const CampaignOptions& opt_;
};

}  // namespace aotfuzz::fuzz

// The ledger of a campaign's findings: what a finding is, which case owns a signature (the
// lowest: claims wait for every lower case to be done, so the owner does not depend on the number
// of workers), a batched verdict confirmed by running the case alone before it is claimed, the
// signatures earlier campaigns bundled, and the findings published (the rule a finding is
// reduced by is reduce/finding_rule.h).
#pragma once

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "fuzz/campaign_types.h"
#include "fuzz/journal_notes.h"
#include "ir/module.h"
#include "oracle/oracle.h"
#include "oracle/verdict.h"
#include "reduce/finding_rule.h"

namespace aotfuzz::fuzz {

/// The harness problem a batched finding is when the case alone, compiled and run as its own
/// program with the same options (what the replay line does), does not give `signature`;
/// nullopt when it does (the finding is confirmed).
std::optional<std::string> unconfirmed_alone(const CaseSpec& spec, const std::string& signature);

/// The claims of one campaign. Cases are numbered within the shard (k).
class FindingLedger {
 public:
  /// Goes on from what the earlier children of this run completed and claimed (`restart`).
  FindingLedger(JournalNotes& notes, const Restart& restart);

  /// The signatures bundled in the findings directory at the start (those an earlier child of
  /// this run wrote excepted): seen again, they are known, not new.
  void set_preexisting(std::set<std::string> signatures);
  /// Whether case k, whose verdict is a finding with `signature`, may claim it: once every lower
  /// case is complete (waits for them), when the signature is neither bundled already (then it
  /// is known_seen) nor claimed.
  bool unclaimed(std::uint64_t k, const std::string& signature);
  /// Claims `signature` for case k; returns the number of signatures claimed so far.
  std::size_t claim(const std::string& signature, std::uint64_t k);
  /// Case k is done with, its finding claimed or not.
  void complete(std::uint64_t k);
  /// The case that claimed `signature` (0 when none did).
  std::uint64_t claimed_case(const std::string& signature) const;

  /// Adds a new unique finding, published `now_s` seconds into the campaign.
  void add_finding(Finding finding, double now_s);

  /// New and known signatures seen so far.
  std::size_t unique_signatures() const;
  double last_new_finding_s() const;
  std::vector<Finding> findings() const;
  std::set<std::string> known_seen() const;
  std::set<std::string> preexisting() const;

 private:
  JournalNotes& notes_;
  mutable std::mutex mu_;
  std::condition_variable completed_;
  // Every case below it is complete; done_above_ holds the complete cases above it.
  std::uint64_t watermark_ = 0;
  std::set<std::uint64_t> done_above_;
  std::map<std::string, std::uint64_t> claimed_;
  std::set<std::string> preexisting_;
  std::set<std::string> known_seen_;
  std::vector<Finding> findings_;
  double last_new_finding_s_ = -1;
};

}  // namespace aotfuzz::fuzz

// The finding ledger: claims in case order and confirmation of batched verdicts.
#include "fuzz/finding_ledger.h"

#include <utility>

namespace aotfuzz::fuzz {

std::optional<std::string> unconfirmed_alone(const CaseSpec& spec, const std::string& signature) {
  const std::string alone = oracle::signature(oracle::run_case(spec.module, spec.options).verdict);
  if (alone == signature) return std::nullopt;
  return "case " + std::to_string(spec.index) + ": batched " + signature + " but alone " + alone +
         " (" + oracle::replay_flags(spec.options) + ")";
}

FindingLedger::FindingLedger(JournalNotes& notes, const Restart& restart)
    : notes_(notes),
      watermark_(restart.first_case),
      claimed_(restart.claimed),
      findings_(restart.findings),
      last_new_finding_s_(restart.last_new_finding_s) {}

void FindingLedger::set_preexisting(std::set<std::string> signatures) {
  std::lock_guard lock(mu_);
  preexisting_ = std::move(signatures);
  // The bundles an earlier child of this run wrote are this run's findings.
  for (const auto& [signature, k] : claimed_) preexisting_.erase(signature);
}

bool FindingLedger::unclaimed(std::uint64_t k, const std::string& signature) {
  std::unique_lock lock(mu_);
  completed_.wait(lock, [&] { return watermark_ >= k; });
  if (preexisting_.count(signature)) {
    known_seen_.insert(signature);
    return false;
  }
  return !claimed_.count(signature);
}

std::size_t FindingLedger::claim(const std::string& signature, std::uint64_t k) {
  std::lock_guard lock(mu_);
  claimed_[signature] = k;
  return claimed_.size();
}

void FindingLedger::complete(std::uint64_t k) {
  std::lock_guard lock(mu_);
  if (k == watermark_) {
    ++watermark_;
    while (!done_above_.empty() && *done_above_.begin() == watermark_) {
      done_above_.erase(done_above_.begin());
      ++watermark_;
    }
  } else {
    done_above_.insert(k);
  }
  // Under the ledger's lock: the journal's watermark never goes back.
  notes_.done(watermark_, k);
  completed_.notify_all();
}

std::uint64_t FindingLedger::claimed_case(const std::string& signature) const {
  std::lock_guard lock(mu_);
  auto it = claimed_.find(signature);
  return it == claimed_.end() ? 0 : it->second;
}

void FindingLedger::add_finding(Finding finding, double now_s) {
  std::lock_guard lock(mu_);
  findings_.push_back(std::move(finding));
  last_new_finding_s_ = now_s;
}

std::size_t FindingLedger::unique_signatures() const {
  std::lock_guard lock(mu_);
  return claimed_.size() + known_seen_.size();
}

double FindingLedger::last_new_finding_s() const {
  std::lock_guard lock(mu_);
  return last_new_finding_s_;
}

std::vector<Finding> FindingLedger::findings() const {
  std::lock_guard lock(mu_);
  return findings_;
}

std::set<std::string> FindingLedger::known_seen() const {
  std::lock_guard lock(mu_);
  return known_seen_;
}

std::set<std::string> FindingLedger::preexisting() const {
  std::lock_guard lock(mu_);
  return preexisting_;
}

}  // namespace aotfuzz::fuzz

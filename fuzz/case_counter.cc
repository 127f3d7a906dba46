// The counters of a running campaign.
#include "fuzz/case_counter.h"

namespace aotfuzz::fuzz {

CaseCounter::CaseCounter(JournalNotes& notes, const Restart& restart)
    : notes_(notes),
      counted_before_(restart.counted_before),
      totals_(restart.stats),
      hits_(restart.signature_hits) {}

void CaseCounter::count(std::uint64_t k, const bundles::CampaignStats& one,
                        const std::string* finding_signature) {
  if (counted_before(k)) return;
  std::lock_guard lock(mu_);
  totals_ += one;
  if (finding_signature != nullptr) ++hits_[*finding_signature];
  // Under the same lock as the totals: the journal's totals never go back.
  notes_.counted(k, totals_, finding_signature);
}

void CaseCounter::add_generator_error() {
  std::lock_guard lock(mu_);
  ++totals_.generator_errors;
}

bool CaseCounter::add_over_budget() {
  std::lock_guard lock(mu_);
  return totals_.over_budget++ == 0;
}

void CaseCounter::add_waiting_us(std::uint64_t us) {
  std::lock_guard lock(mu_);
  totals_.waiting_us += us;
}

bundles::CampaignStats CaseCounter::totals() const {
  std::lock_guard lock(mu_);
  return totals_;
}

std::map<std::string, std::uint64_t> CaseCounter::signature_hits() const {
  std::lock_guard lock(mu_);
  return hits_;
}

}  // namespace aotfuzz::fuzz

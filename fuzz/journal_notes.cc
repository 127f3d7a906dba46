// The crash journal's notes of a campaign child, and the restart they make.
#include "fuzz/journal_notes.h"

#include <algorithm>
#include <cstring>

namespace aotfuzz::fuzz {

Restart restart_from(const CrashJournal* journal) {
  Restart r;
  if (journal == nullptr || journal->children.load() <= 1) return r;
  const CrashJournal& j = *journal;
  r.first_case = j.done_below.load();
  for (int i = 0; i < j.num_done_above; ++i) {
    if (j.done_above[i] >= r.first_case) r.judged_before.insert(j.done_above[i]);
  }
  for (int i = 0; i < j.num_counted_above; ++i) {
    const std::uint64_t c = j.counted_above[i];
    if (c >= r.first_case && !r.judged_before.count(c)) r.counted_before.insert(c);
  }
  r.stats = j.stats;
  CampaignResult earlier = result_of(j);
  r.signature_hits = std::move(earlier.signature_hits);
  r.findings = std::move(earlier.findings);
  for (const Finding& f : r.findings) {
    r.last_new_finding_s = std::max(r.last_new_finding_s, f.found_after_s);
  }
  for (int i = 0; i < j.num_signatures; ++i) {
    const auto& rec = j.signatures[i];
    if (rec.recorded > 0) r.recorded_hits[rec.signature] = rec.recorded;
    if (rec.claimed) r.claimed[rec.signature] = rec.claimed_k;
  }
  return r;
}

void JournalNotes::note_above(std::uint64_t* list, int& n, std::uint64_t k) {
  if (n == CrashJournal::kMaxAbove) {
    const std::uint64_t watermark = journal_->done_below.load();
    int kept = 0;
    for (int i = 0; i < n; ++i) {
      if (list[i] >= watermark) list[kept++] = list[i];
    }
    n = kept;
  }
  if (n < CrashJournal::kMaxAbove) list[n++] = k;
}

void JournalNotes::done(std::uint64_t watermark, std::uint64_t k) {
  if (journal_ == nullptr) return;
  std::lock_guard lock(mu_);
  journal_->done_below.store(watermark);
  if (k >= watermark) note_above(journal_->done_above, journal_->num_done_above, k);
}

void JournalNotes::counted(std::uint64_t k, const bundles::CampaignStats& totals,
                           const std::string* finding_signature) {
  if (journal_ == nullptr) return;
  std::lock_guard lock(mu_);
  if (finding_signature != nullptr) {
    if (auto* rec = journal_->record_of(*finding_signature)) ++rec->hits;
  }
  journal_->stats = totals;
  note_above(journal_->counted_above, journal_->num_counted_above, k);
}

void JournalNotes::recorded(const std::string& signature, std::uint64_t hits) {
  if (journal_ == nullptr) return;
  std::lock_guard lock(mu_);
  if (auto* rec = journal_->record_of(signature)) rec->recorded = hits;
}

void JournalNotes::claimed(const Finding& f, std::uint64_t k) {
  if (journal_ == nullptr) return;
  std::lock_guard lock(mu_);
  auto* rec = journal_->record_of(f.signature);
  if (rec == nullptr) return;
  rec->claimed = true;
  rec->claimed_k = k;
  rec->case_index = f.case_index;
  rec->found_after_s = f.found_after_s;
  rec->ops_before = f.reduction.before.ops;
  rec->ops_after = f.reduction.after.ops;
  rec->inputs_before = f.reduction.before.inputs;
  rec->inputs_after = f.reduction.after.inputs;
  rec->bundle_written = f.bundle_written;
  auto copy = [](char* to, std::size_t n, const std::string& from) {
    const std::size_t len = std::min(n - 1, from.size());
    std::memcpy(to, from.data(), len);
    to[len] = '\0';
  };
  copy(rec->bundle_dir, sizeof rec->bundle_dir, f.bundle_dir);
  copy(rec->replay, sizeof rec->replay, f.replay);
  copy(rec->summary, sizeof rec->summary, f.summary);
}

void JournalNotes::announced() {
  if (journal_ != nullptr) ++journal_->findings;
}

void JournalNotes::culprit_judged(std::uint64_t k) {
  if (journal_ != nullptr && journal_->is_culprit(k)) ++journal_->culprits_judged;
}

}  // namespace aotfuzz::fuzz

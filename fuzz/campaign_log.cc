// A campaign's callbacks, serialized.
#include "fuzz/campaign_log.h"

namespace aotfuzz::fuzz {

void CampaignLog::judged(const CaseSpec& spec, const oracle::CaseResult& result) {
  if (!cb_.on_case) return;
  std::lock_guard out(out_mu_);
  cb_.on_case(spec, result);
}

void CampaignLog::finding(const Finding& finding, const std::function<void()>& record) {
  std::lock_guard out(out_mu_);
  record();
  if (cb_.on_finding) cb_.on_finding(finding);
}

void CampaignLog::harness_problem(const std::string& problem) {
  {
    std::lock_guard lock(problems_mu_);
    problems_.push_back(problem);
  }
  warn("harness problem, not a finding: " + problem);
}

std::vector<std::string> CampaignLog::harness_problems() const {
  std::lock_guard lock(problems_mu_);
  return problems_;
}

void CampaignLog::write(LogLevel level, const std::string& line) {
  std::lock_guard out(out_mu_);
  if (cb_.on_log) cb_.on_log(level, line);
}

}  // namespace aotfuzz::fuzz

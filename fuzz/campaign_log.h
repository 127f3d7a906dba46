// What a campaign tells its caller as it goes: log lines, judged cases and new findings through
// its callbacks, one call at a time whichever thread makes it; and the harness problems it met.
#pragma once

#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "fuzz/campaign_types.h"

namespace aotfuzz::fuzz {

class CampaignLog {
 public:
  explicit CampaignLog(const CampaignCallbacks& callbacks) : cb_(callbacks) {}

  void info(const std::string& line) { write(LogLevel::kInfo, line); }
  void warn(const std::string& line) { write(LogLevel::kWarning, line); }
  /// A case with its verdict (on_case).
  void judged(const CaseSpec& spec, const oracle::CaseResult& result);
  /// A new unique finding: `record` (which keeps it in the result) and on_finding run as one
  /// step, so that the callback sees the findings in the result's order.
  void finding(const Finding& finding, const std::function<void()>& record);
  /// A problem of the harness, never a finding: kept for the result and warned of.
  void harness_problem(const std::string& problem);
  std::vector<std::string> harness_problems() const;

 private:
  void write(LogLevel level, const std::string& line);

  const CampaignCallbacks& cb_;
  std::mutex out_mu_;  // serializes the callbacks
  mutable std::mutex problems_mu_;
  std::vector<std::string> problems_;
};

}  // namespace aotfuzz::fuzz

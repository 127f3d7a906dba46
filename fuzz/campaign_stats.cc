// A campaign's statistics.
#include "fuzz/campaign_stats.h"

#include <algorithm>

namespace aotfuzz::fuzz {

std::uint64_t CampaignStats::count(oracle::VerdictKind kind) const {
  std::uint64_t n = 0;
  for (auto v : verdicts[static_cast<int>(kind)]) n += v;
  return n;
}

std::vector<std::pair<std::string, double>> CampaignStats::phase_seconds(
    double worker_seconds) const {
  std::vector<std::pair<std::string, double>> out{
      {"generation", static_cast<double>(generation_us) / 1e6},
      {"passes", static_cast<double>(passes_us) / 1e6},
      {"codegen", static_cast<double>(codegen_us) / 1e6},
      {"compile", static_cast<double>(compile_us) / 1e6},
      {"run", static_cast<double>(run_us) / 1e6},
      {"waiting", static_cast<double>(waiting_us) / 1e6},
  };
  double known = 0;
  for (const auto& [name, secs] : out) known += secs;
  out.emplace_back("other", std::max(0.0, worker_seconds - known));
  return out;
}

}  // namespace aotfuzz::fuzz

// The three-way throughput measurement of `aotfuzz bench`.
#include "fuzz/throughput.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <thread>

#include "host/tempdir.h"
#include "oracle/case_flow.h"

namespace aotfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct CampaignRun {
  double cases_per_s = 0;
  std::uint64_t cases = 0;
  std::vector<std::pair<std::string, std::uint64_t>> signatures;
  std::vector<std::pair<std::string, double>> phase_shares;
  double system_bound = 0;
};

// Seconds by phase, in the order they first appear.
class PhaseTimes {
 public:
  void add(const std::string& name, std::chrono::microseconds t) {
    for (auto& [n, s] : seconds_) {
      if (n == name) {
        s += static_cast<double>(t.count()) / 1e6;
        return;
      }
    }
    seconds_.emplace_back(name, static_cast<double>(t.count()) / 1e6);
  }
  void add_case(const oracle::CaseResult& r) {
    auto rest = r.pipeline_time - r.codegen_time;
    for (const auto& [name, t] : r.system_steps) {
      add(name, t);
      system_seconds_ += static_cast<double>(t.count()) / 1e6;
      rest -= t;
    }
    add(r.system_steps.empty() ? "passes" : "prepare, other", std::max(rest, decltype(rest){0}));
    add("codegen", r.codegen_time);
    add("compile", r.compile_time);
    add("run", r.run_time);
  }
  std::vector<std::pair<std::string, double>> shares(double worker_seconds) const {
    std::vector<std::pair<std::string, double>> out;
    double known = 0;
    for (const auto& [name, s] : seconds_) known += s;
    const double total = std::max({worker_seconds, known, 1e-9});
    for (const auto& [name, s] : seconds_) out.emplace_back(name, s / total);
    out.emplace_back("other", (total - known) / total);
    return out;
  }
  /// Cases per second the system's own steps allow on `jobs` workers (0: none were reported).
  double system_bound(std::uint64_t cases, int jobs) const {
    if (system_seconds_ <= 0) return 0;
    return static_cast<double>(cases) * std::max(1, jobs) / system_seconds_;
  }

 private:
  std::vector<std::pair<std::string, double>> seconds_;
  double system_seconds_ = 0;
};

CampaignRun run_mode(CampaignOptions o, ExecutorChoice executor) {
  o.executor = executor;
  o.findings_dir.clear();
  o.reduce = false;
  std::map<std::string, std::uint64_t> counts;
  PhaseTimes phases;
  std::mutex mu;
  CampaignCallbacks cb;
  cb.on_case = [&](const CaseSpec&, const oracle::CaseResult& r) {
    std::lock_guard lock(mu);
    ++counts[oracle::signature(r.verdict)];
    phases.add_case(r);
  };
  const auto t0 = Clock::now();
  CampaignResult r = run_campaign(o, cb);
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  CampaignRun out;
  out.cases = r.stats.cases;
  out.cases_per_s = static_cast<double>(r.stats.cases) / std::max(1e-9, secs);
  out.signatures.assign(counts.begin(), counts.end());
  out.phase_shares = phases.shares(secs * std::max(1, o.jobs));
  out.system_bound = phases.system_bound(r.stats.cases, o.jobs);
  return out;
}

// The floor: every case's emitted sources (prepared before the clock starts) compiled by the
// compiler's command line and run, one process each, on `jobs` threads.
double run_floor(const CampaignOptions& o, std::uint64_t& cases_run) {
  const std::uint64_t n = o.max_cases.value_or(0);
  std::vector<oracle::PreparedCase> prepared;
  for (std::uint64_t k = 0; k < n; ++k) {
    CaseSpec spec = make_case(o, shard_case(o.shard, k));
    oracle::CaseResult r;
    if (auto c = oracle::prepare_case(spec.module, spec.options, r)) prepared.push_back(std::move(*c));
  }
  std::atomic<std::size_t> next{0};
  const auto t0 = Clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < std::max(1, o.jobs); ++t) {
    threads.emplace_back([&] {
      oracle::SingleProgramExecutor executor;
      for (;;) {
        const std::size_t i = next.fetch_add(1);
        if (i >= prepared.size()) break;
        (void)executor.run(std::span<const oracle::PreparedCase>(&prepared[i], 1));
      }
    });
  }
  for (auto& t : threads) t.join();
  const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
  // Cases settled before codegen have nothing to compile: the floor counts every case, as the
  // campaigns do, over the time the compiled ones took.
  cases_run = n;
  return static_cast<double>(n) / std::max(1e-9, secs);
}

// A system whose programs are not batched: its own path (the system's work for some cases
// overlapping the programs of others, where it can) against one case at a time, alternating.
ThroughputResult measure_unbatched(CampaignOptions o, const ThroughputOptions& options) {
  ModeThroughput fast{"default", {}, 0, 0, {}, {}, 0};
  ModeThroughput slow{"one-case", {}, 0, 0, {}, {}, 0};
  for (int round = 0; round < std::max(1, options.rounds); ++round) {
    for (auto [mode, executor] :
         {std::pair{&fast, ExecutorChoice::kBatched}, std::pair{&slow, ExecutorChoice::kSingle}}) {
      if (options.batched_only && mode == &slow) continue;
      CampaignRun run = run_mode(o, executor);
      mode->cases_per_s.push_back(run.cases_per_s);
      mode->cases = run.cases;
      if (round == 0) {
        mode->signatures = run.signatures;
        mode->phase_shares = run.phase_shares;
        mode->system_bound = run.system_bound;
      }
    }
  }
  ThroughputResult r;
  r.compiler = "default: the system's own";
  for (auto* m : {&fast, &slow}) {
    if (m->cases_per_s.empty()) continue;
    m->median = median(m->cases_per_s);
    r.modes.push_back(*m);
  }
  if (!options.batched_only) r.same_signatures = fast.signatures == slow.signatures;
  return r;
}

}  // namespace

ThroughputResult measure_throughput(const ThroughputOptions& options) {
  CampaignOptions o = options.campaign;
  if (!o.max_cases) throw CampaignError("bench needs a number of cases");
  o.time_limit.reset();
  if (!oracle::system_of(o.base).batches_programs() && !o.base.compiler) {
    return measure_unbatched(o, options);
  }
  if (!o.base.toolchain) {
    o.base.toolchain = o.base.compiler ? host::find_toolchain(*o.base.compiler)
                                       : host::default_toolchain();
  }
  if (!o.base.compiler && o.base.toolchain) o.base.compiler = o.base.toolchain->kind;
  ModeThroughput batched{"batched", {}, 0, 0, {}, {}, 0};
  ModeThroughput single{"single", {}, 0, 0, {}, {}, 0};
  ModeThroughput floor{"floor", {}, 0, 0, {}, {}, 0};
  for (int round = 0; round < std::max(1, options.rounds); ++round) {
    CampaignRun b = run_mode(o, ExecutorChoice::kBatched);
    batched.cases_per_s.push_back(b.cases_per_s);
    batched.cases = b.cases;
    if (round == 0) batched.signatures = b.signatures;
    if (options.batched_only) continue;
    CampaignRun s = run_mode(o, ExecutorChoice::kSingle);
    single.cases_per_s.push_back(s.cases_per_s);
    single.cases = s.cases;
    if (round == 0) single.signatures = s.signatures;
    floor.cases_per_s.push_back(run_floor(o, floor.cases));
  }
  ThroughputResult r;
  if (o.base.compiler) r.compiler = host::compiler_kind_name(*o.base.compiler);
  for (auto* m : {&batched, &single, &floor}) {
    if (m->cases_per_s.empty()) continue;
    m->median = median(m->cases_per_s);
    r.modes.push_back(*m);
  }
  if (!options.batched_only) r.same_signatures = batched.signatures == single.signatures;
  return r;
}

std::string format_throughput(const ThroughputResult& r, const ThroughputOptions& options) {
  const auto& o = options.campaign;
  std::string out = "aotfuzz bench: seed " + std::to_string(o.seed) + ", " +
                    std::to_string(o.max_cases.value_or(0)) + " cases, " +
                    std::to_string(o.jobs) + " jobs, compiler " +
                    (r.compiler.empty() ? std::string("none") : r.compiler) + ", " + std::to_string(std::max(1, options.rounds)) + " round(s), medians";
  // The first mode is the one measured against the others.
  const ModeThroughput* first = r.modes.empty() ? nullptr : &r.modes.front();
  for (const auto& m : r.modes) {
    char buf[160];
    std::snprintf(buf, sizeof buf, "\n%-8s %8.1f cases/s", m.mode.c_str(), m.median);
    out += buf;
    if (m.cases_per_s.size() > 1) {
      out += "  (rounds:";
      for (double v : m.cases_per_s) {
        std::snprintf(buf, sizeof buf, " %.1f", v);
        out += buf;
      }
      out += ")";
    }
  }
  if (first != nullptr) {
    for (const auto& m : r.modes) {
      if (&m == first || m.median <= 0) continue;
      char buf[96];
      std::snprintf(buf, sizeof buf, "\n%s / %s: %.2fx", first->mode.c_str(), m.mode.c_str(),
                    first->median / m.median);
      out += buf;
    }
  }
  for (const auto& m : r.modes) {
    if (m.phase_shares.empty() || (first != nullptr && first->mode == "batched")) continue;
    out += "\nphases (" + m.mode + ", workers' time):";
    for (const auto& [name, share] : m.phase_shares) {
      char buf[96];
      std::snprintf(buf, sizeof buf, " %s %.1f%%,", name.c_str(), 100 * share);
      out += buf;
    }
    out.pop_back();
  }
  for (const auto& m : r.modes) {
    if (m.system_bound <= 0) continue;
    char buf[160];
    std::snprintf(buf, sizeof buf,
                  "\nbound by the system's own steps alone (%s): %.1f cases/s on %d jobs",
                  m.mode.c_str(), m.system_bound, std::max(1, o.jobs));
    out += buf;
  }
  if (r.same_signatures && r.modes.size() >= 2) {
    out += "\nsignature counts " + r.modes[0].mode + " vs " + r.modes[1].mode + ": " +
           (*r.same_signatures ? "same" : "DIFFERENT");
    if (!*r.same_signatures) {
      for (const auto& m : r.modes) {
        if (m.signatures.empty()) continue;
        out += "\n  " + m.mode + ":";
        for (const auto& [sig, n] : m.signatures) out += " " + sig + "=" + std::to_string(n);
      }
    }
  }
  return out;
}

}  // namespace aotfuzz::fuzz

// The reductions of a campaign's findings, each ending in a replaced bundle.
#include "fuzz/finding_reduction.h"

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bundles/replay.h"
#include "fuzz/finding_ledger.h"
#include "ir/parser.h"

namespace aotfuzz::fuzz {

FindingReducer::FindingReducer(const CampaignOptions& options, const FindingBundles& bundles,
                               CampaignLog& log, bool seeks_cleaner_repros,
                               std::optional<std::chrono::steady_clock::time_point> deadline)
    : opt_(options),
      bundles_(bundles),
      log_(log),
      seeks_cleaner_repros_(seeks_cleaner_repros),
      deadline_(deadline) {}

reduce::ReduceOptions FindingReducer::reduce_options() const {
  reduce::ReduceOptions ro;
  ro.jobs = opt_.reduce_jobs > 0 ? opt_.reduce_jobs : std::max(1, opt_.jobs);
  ro.time_limit = opt_.reduce_time;
  if (deadline_) {
    // 0 is no limit to the reducer: past the deadline, a millisecond.
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
        *deadline_ - std::chrono::steady_clock::now());
    ro.time_limit = std::clamp(left, std::chrono::milliseconds(1), opt_.reduce_time);
  }
  ro.stop = opt_.stop;
  ro.min_rank = static_cast<std::size_t>(std::max(0, opt_.policy.min_rank));
  return ro;
}

bool FindingReducer::ended(const reduce::ReduceResult& red) const {
  const bool out_of_time = deadline_ && std::chrono::steady_clock::now() >= *deadline_;
  return red.minimal || !(stop_requested(opt_) || out_of_time);
}

oracle::CaseOptions FindingReducer::canonical_options(const CaseSpec& spec,
                                                      const std::string& signature) const {
  oracle::CaseOptions o = spec.options;
  using Api = aot::Options::Api;
  using Interface = aot::Options::Interface;
  auto attempt = [&](auto change) {
    oracle::CaseOptions c = o;
    change(c);
    if (oracle::signature(oracle::run_case(spec.module, c).verdict) == signature) o = c;
  };
  if (o.aot.interface != Interface::kPacked) {
    attempt([](oracle::CaseOptions& c) { c.aot.interface = Interface::kPacked; });
  }
  if (o.aot.api != Api::kPacked && o.aot.interface == Interface::kPacked) {
    attempt([](oracle::CaseOptions& c) { c.aot.api = Api::kPacked; });
  }
  if (!o.aot.merge) attempt([](oracle::CaseOptions& c) { c.aot.merge = true; });
  if (!o.aot.storage_reuse) {
    attempt([](oracle::CaseOptions& c) { c.aot.storage_reuse = true; });
  }
  return o;
}

void FindingReducer::reduce_new_finding(const CaseSpec& spec, Finding& f) {
  const oracle::CaseOptions o = canonical_options(spec, f.signature);
  reduce::FindingReduction red =
      reduce::reduce_finding(spec.module, o, f.signature, reduce_options());
  if (red.signature_only && seeks_cleaner_repros_) {
    std::lock_guard lock(mu_);
    needs_cleaner_[f.signature];
  }
  const ir::Module reduced = red.result.module;
  f.reduction = std::move(red.result);
  f.reduction.module = ir::Module();
  f.flags = oracle::replay_flags(o);
  try {
    auto w = bundles_.write(spec, f.signature, o, reduced, f.reduction, ended(f.reduction),
                            /*replace=*/true);
    f.replay = bundles::replay_command((w.dir / "reduced.relay").string(), o);
  } catch (const std::exception& e) {
    f.error = e.what();
  }
}

bool FindingReducer::start_cleaner_attempt(const std::string& signature, bool stopping) {
  std::lock_guard lock(mu_);
  auto it = needs_cleaner_.find(signature);
  if (it == needs_cleaner_.end() || it->second.busy) return false;
  if (it->second.attempts >= kCleanerAttempts || stopping) return false;
  it->second.busy = true;
  ++it->second.attempts;
  return true;
}

void FindingReducer::try_cleaner_repro(const CaseSpec& spec, const std::string& signature,
                                       bool stopping) {
  if (!start_cleaner_attempt(signature, stopping)) return;
  bool replaced = false;
  try {
    const auto fixed = oracle::fixed_options(spec.options);
    if (fixed &&
        oracle::run_case(spec.module, *fixed).verdict.kind() == oracle::VerdictKind::kPass) {
      const oracle::CaseOptions o = canonical_options(spec, signature);
      reduce::ReduceResult red =
          reduce::reduce(spec.module, reduce::finding_predicate(o, signature), reduce_options());
      if (reduce::reduction_kept(red)) {
        const ir::Module reduced = red.module;
        bundles_.write(spec, signature, o, reduced, red, ended(red), /*replace=*/true);
        log_.info("case " + std::to_string(spec.index) + " gives " + signature +
                  " and passes on the fixed build: its reduction (ops " +
                  std::to_string(red.before.ops) + " -> " + std::to_string(red.after.ops) +
                  ") replaces the bundle");
        replaced = true;
      }
    }
  } catch (const std::exception& e) {
    log_.warn("cannot replace the bundle of " + signature + ": " + e.what());
  }
  std::lock_guard lock(mu_);
  if (replaced) {
    needs_cleaner_.erase(signature);
  } else {
    needs_cleaner_[signature].busy = false;
  }
}

void FindingReducer::resume_reduction(const std::filesystem::path& dir) {
  if (stop_requested(opt_)) return;
  try {
    std::ifstream in(dir / "verdict.json");
    const auto j = nlohmann::json::parse(in);
    const std::string sig = j.at("signature").get<std::string>();
    const oracle::CaseOptions o = systems::parse_case_flags(j.at("flags").get<std::string>());
    CaseSpec spec;
    spec.module = ir::parse_module(bundles::read_text_file(dir / "original.relay"));
    spec.options = o;
    spec.index = j.at("info").value("case", std::uint64_t{0});
    spec.gen_seed = j.at("info").value("gen_seed", std::uint64_t{0});
    const ir::Module best = ir::parse_module(bundles::read_text_file(dir / "reduced.relay"));
    log_.info("resuming the reduction of " + sig + " (" + dir.string() + ")");
    reduce::ReduceResult red =
        reduce::reduce(best, reduce::finding_predicate(o, sig), reduce_options());
    red.before = reduce::module_size(spec.module);
    const ir::Module reduced = red.module;
    const nlohmann::json prior = j.at("info");
    bundles_.write(spec, sig, o, reduced, red, ended(red), /*replace=*/true, &prior);
    log_.info("reduced " + sig + ": ops " + std::to_string(red.before.ops) + " -> " +
              std::to_string(red.after.ops));
  } catch (const std::exception& e) {
    log_.warn("cannot resume the reduction in " + dir.string() + ": " + e.what());
  }
}

}  // namespace aotfuzz::fuzz

// A campaign's finding bundles: their header lines and verdict.json info.
#include "fuzz/finding_bundle.h"

#include "fuzz/campaign_cases.h"
#include "fuzz/campaign_report.h"
#include "ir/structural.h"

namespace aotfuzz::fuzz {
namespace {

// "reduced: ops 9 -> 2, inputs 3 -> 1, 5 steps (1-minimal)", and whether the reduction ended.
std::string reduction_header(const reduce::ReduceResult& red, bool complete) {
  return "reduced: ops " + std::to_string(red.before.ops) + " -> " + std::to_string(red.after.ops) +
         ", inputs " + std::to_string(red.before.inputs) + " -> " +
         std::to_string(red.after.inputs) + ", " + std::to_string(red.steps) + " steps" +
         (red.minimal ? " (1-minimal)" : "") + (complete ? "" : " (not fully reduced)");
}

nlohmann::json reduction_info(const reduce::ReduceResult& red, bool complete) {
  return {{"steps", red.steps},
          {"minimal", red.minimal},
          {"complete", complete},
          {"steps_per_pass", red.steps_per_pass},
          {"before", to_json(red.before)},
          {"after", to_json(red.after)}};
}

}  // namespace

std::string FindingBundles::origin(const CaseSpec& spec, const nlohmann::json* prior) const {
  if (prior != nullptr && prior->contains("origin")) return (*prior)["origin"].get<std::string>();
  return "aotfuzz fuzz --seed " + std::to_string(opt_.seed) + ", case " +
         std::to_string(spec.index) + " (graph: " + gen_command(opt_, spec) + ")";
}

nlohmann::json FindingBundles::campaign_info(const CaseSpec& spec,
                                             const std::string& origin) const {
  nlohmann::json info = {
      {"origin", origin},
      {"campaign_seed", opt_.seed},
      {"case", spec.index},
      {"shard", std::to_string(opt_.shard.index) + "/" + std::to_string(opt_.shard.count)},
      {"gen_seed", spec.gen_seed},
      {"gen_command", gen_command(opt_, spec)},
      {"original_flags", oracle::replay_flags(spec.options)}};
  if (!opt_.system_identity.empty()) info["system"] = opt_.system_identity;
  return info;
}

bundles::BundleWriteResult FindingBundles::write(
    const CaseSpec& spec, const std::string& signature, const oracle::CaseOptions& o,
    const ir::Module& reduced, const reduce::ReduceResult& red, bool complete, bool replace,
    const nlohmann::json* prior, const oracle::CaseResult* ran) const {
  bundles::Bundle b;
  b.signature = signature;
  b.options = o;
  b.original = spec.module;
  b.reduced = reduced;
  b.reduced_result = ran != nullptr ? *ran : oracle::run_case(reduced, o);
  // Before reduction the two are one graph: run it once.
  b.original_verdict = ir::structural_equal(reduced, spec.module)
                           ? b.reduced_result.verdict
                           : oracle::run_case(spec.module, o).verdict;
  const std::string from = origin(spec, prior);
  b.header.push_back("origin: " + from);
  b.reduced_header.push_back(reduction_header(red, complete));
  if (const auto fixed = oracle::fixed_options(o)) {
    b.extra_replays.emplace_back(oracle::replay_flags(*fixed),
                                 oracle::signature(oracle::run_case(reduced, *fixed).verdict));
  }
  b.info = prior != nullptr ? *prior : campaign_info(spec, from);
  b.info["reduction"] = reduction_info(red, complete);
  return bundles::write_bundle(opt_.findings_dir, b, replace);
}

bool FindingBundles::write_first(const CaseSpec& spec, Finding& f, bool complete,
                                 const oracle::CaseResult* ran) const {
  f.reduction.before = f.reduction.after = reduce::module_size(spec.module);
  try {
    auto w = write(spec, f.signature, spec.options, spec.module, f.reduction, complete,
                   /*replace=*/false, nullptr, ran);
    f.bundle_dir = w.dir.string();
    f.bundle_written = w.written;
    f.replay = bundles::replay_command((w.dir / "reduced.relay").string(), spec.options);
    return true;
  } catch (const std::exception& e) {
    f.error = e.what();
    return false;
  }
}

std::string FindingBundles::generator_replay(const CaseSpec& spec, const std::string& flags) const {
  return gen_command(opt_, spec) + " | aotfuzz run /dev/stdin " + flags;
}

}  // namespace aotfuzz::fuzz

// The cases of a campaign: every case a pure function of (seed, index) and the options, so any
// case can be regenerated alone (replay lines, shards, resumed campaigns).
#include "fuzz/campaign_cases.h"

#include <charconv>

#include "generator/builder.h"
#include "generator/mutator.h"
#include "host/shell_words.h"
#include "ir/rng.h"
#include "oracle/sut.h"

namespace aotfuzz::fuzz {
namespace {

std::uint64_t mix64(std::uint64_t z) {
  z += 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// A different stream for the pipeline options than for the graph.
constexpr std::uint64_t kOptionStream = 0x6f7074696f6e73ULL;  // "options"

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

}  // namespace

Shard parse_shard(std::string_view text) {
  auto slash = text.find('/');
  if (slash == std::string_view::npos) {
    throw CampaignError("--shard expects i/n, got '" + std::string(text) + "'");
  }
  auto i = parse_u64(text.substr(0, slash));
  auto n = parse_u64(text.substr(slash + 1));
  if (!i || !n || *n == 0 || *i >= *n) {
    throw CampaignError("--shard expects i/n with 0 <= i < n, got '" + std::string(text) + "'");
  }
  return Shard{*i, *n};
}

std::uint64_t shard_case(const Shard& shard, std::uint64_t k) {
  return k * shard.count + shard.index;
}

std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index) {
  ir::Rng rng(seed ^ mix64(index));
  return rng.next();
}

CaseSpec make_case(const CampaignOptions& options, std::uint64_t index) {
  CaseSpec s;
  s.index = index;
  s.gen_seed = case_seed(options.seed, index);
  if (!options.corpus.empty() && index % 2 == 1) {
    // The user's graphs are theirs: nothing says they are merge-safe, so refusals are not kept.
    const CorpusGraph& graph = options.corpus[(index / 2) % options.corpus.size()];
    s.module = generator::mutant(graph.module, s.gen_seed);
    s.corpus_file = graph.path;
    s.merge_safe = false;
  } else {
    ir::Rng rng(s.gen_seed);
    generator::GenPolicy policy =
        options.swarm ? generator::swarm(options.policy, rng) : options.policy;
    s.module = generator::generate(policy, rng);
    s.merge_safe = policy.merge_safe;
  }

  // Every draw happens whatever is fixed, so fixing one option leaves the others unchanged.
  ir::Rng orng(s.gen_seed ^ kOptionStream);
  const bool merge = orng.chance(0.5);
  const bool unpacked = orng.chance(oracle::system_of(options.base).unpacked_api_share());
  const bool c_interface = orng.chance(0.5);
  const bool reuse = orng.chance(0.75);
  // Drawn after the others, so they stay what they were. A small relay.FuseOps.max_depth for one
  // case in eight: FuseOps' size limit is otherwise never reached by graphs of a few ops. Depth 1
  // fuses nothing (every operator its own kernel).
  const bool small_depth = orng.chance(0.125);
  const int depth = 1 + static_cast<int>(orng.below(4));
  // The determinism oracle generates the C twice, a tenth of a case's time: one case in eight.
  const bool determinism = orng.chance(0.125);
  // The warnings oracle runs gcc on the case's C, dozens of times a batched case's cost: one case
  // in 512 costs a campaign several percent of its cases per second (docs/fuzzing.md).
  const bool warnings = orng.chance(1.0 / 512);
  using Api = aot::Options::Api;
  using Interface = aot::Options::Interface;
  const auto& fixed = options.fixed;
  oracle::CaseOptions o = options.base;
  o.aot.merge = fixed.merge.value_or(merge);
  if (fixed.api) {
    o.aot.api = *fixed.api;
  } else if (fixed.interface == Interface::kC) {
    o.aot.api = Api::kUnpacked;
  } else {
    o.aot.api = unpacked ? Api::kUnpacked : Api::kPacked;
  }
  if (fixed.interface) {
    o.aot.interface = *fixed.interface;
  } else {
    o.aot.interface =
        o.aot.api == Api::kUnpacked && c_interface ? Interface::kC : Interface::kPacked;
  }
  o.aot.storage_reuse = fixed.storage_reuse.value_or(reuse);
  if (fixed.max_fuse_depth) {
    o.aot.max_fuse_depth = *fixed.max_fuse_depth;
  } else if (small_depth) {
    o.aot.max_fuse_depth = depth;
  }
  o.check_determinism = fixed.determinism.value_or(determinism);
  o.check_warnings = fixed.warnings.value_or(warnings);
  s.options = std::move(o);
  return s;
}

PipelineChoice fixed_choice(const oracle::CaseOptions& base,
                            const std::function<bool(const oracle::CaseFlagRow&)>& given) {
  PipelineChoice fixed;
  for (const auto& row : oracle::case_flag_table()) {
    if (!row.drawn || !given(row)) continue;
    switch (row.id) {
      case oracle::CaseFlag::kMerge:
        fixed.merge = base.aot.merge;
        break;
      case oracle::CaseFlag::kApi:
        fixed.api = base.aot.api;
        break;
      case oracle::CaseFlag::kInterface:
        fixed.interface = base.aot.interface;
        break;
      case oracle::CaseFlag::kStorageReuse:
        fixed.storage_reuse = base.aot.storage_reuse;
        break;
      case oracle::CaseFlag::kMaxFuseDepth:
        fixed.max_fuse_depth = base.aot.max_fuse_depth;
        break;
      case oracle::CaseFlag::kDeterminism:
        fixed.determinism = base.check_determinism;
        break;
      case oracle::CaseFlag::kWarnings:
        fixed.warnings = base.check_warnings;
        break;
      default:
        // A row marked drawn that make_case does not draw: the table and the draws disagree.
        throw CampaignError("--" + std::string(row.name) +
                            " is marked drawn per case, but no "
                            "campaign draws it");
    }
  }
  return fixed;
}

std::string gen_command(const CampaignOptions& options, const CaseSpec& spec) {
  if (!spec.corpus_file.empty()) {
    return "aotfuzz gen --seed " + std::to_string(spec.gen_seed) + " --mutate " +
           host::shell_quote_path(spec.corpus_file);
  }
  return "aotfuzz gen --seed " + std::to_string(spec.gen_seed) + (options.swarm ? " --swarm" : "") +
         options.knob_flags;
}

}  // namespace aotfuzz::fuzz

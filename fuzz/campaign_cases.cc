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

// A different stream for the pipeline options than for the graph, and one for the profile, so
// that a campaign without profiles draws what it drew before they existed.
constexpr std::uint64_t kOptionStream = 0x6f7074696f6e73ULL;   // "options"
constexpr std::uint64_t kProfileStream = 0x70726f66696c65ULL;  // "profile"

// ir::Rng::chance(p), but drawing at 0 and 1 too (chance draws nothing there): a fixed option's
// knob is 0 or 1, and its draw must still happen so that the later ones stay what they were.
std::vector<std::string> split_choices(std::string_view choices) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t bar; (bar = choices.find('|', start)) != std::string_view::npos;
       start = bar + 1) {
    out.emplace_back(choices.substr(start, bar - start));
  }
  out.emplace_back(choices.substr(start));
  return out;
}

bool draws(ir::Rng& rng, double p) { return static_cast<double>(rng.next() >> 11) * 0x1.0p-53 < p; }

std::optional<std::uint64_t> parse_u64(std::string_view s) {
  std::uint64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}

std::size_t draw_profile(const CampaignOptions& options, std::uint64_t gen_seed) {
  if (options.profiles.size() < 2) return 0;
  double total = 0;
  for (const auto& p : options.profiles) total += p.weight;
  ir::Rng rng(gen_seed ^ kProfileStream);
  double x = static_cast<double>(rng.next() >> 11) * 0x1.0p-53 * total;
  for (std::size_t i = 0; i < options.profiles.size(); ++i) {
    if (x < options.profiles[i].weight) return i;
    x -= options.profiles[i].weight;
  }
  return options.profiles.size() - 1;
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
  s.profile = draw_profile(options, s.gen_seed);
  const generator::GenPolicy& base_policy =
      options.profiles.empty() ? options.policy : options.profiles[s.profile].policy;
  generator::GenPolicy policy = base_policy;
  if (!options.corpus.empty() && index % 2 == 1) {
    // The user's graphs are theirs: nothing says they are merge-safe, so refusals are not kept.
    const CorpusGraph& graph = options.corpus[(index / 2) % options.corpus.size()];
    s.module = generator::mutant(graph.module, s.gen_seed);
    s.corpus_file = graph.path;
    s.merge_safe = false;
  } else {
    ir::Rng rng(s.gen_seed);
    if (options.swarm) policy = generator::swarm(base_policy, rng);
    s.module = generator::generate(policy, rng);
    s.merge_safe = policy.merge_safe;
  }

  // In table order, and every draw whatever its knob holds: fixing one option (its knob 0 or 1)
  // leaves the others unchanged.
  ir::Rng orng(s.gen_seed ^ kOptionStream);
  oracle::CaseOptions o = options.base;
  oracle::SutSpec no_system;  // no drawn row names the system
  oracle::CaseFlagTarget target{o, no_system};
  for (const auto& row : oracle::case_flag_table()) {
    const oracle::CaseDraw& draw = row.draw;
    if (!draw.drawn()) continue;
    const bool hit = draws(orng, generator::knob_number(policy, draw.knob));
    std::string value(hit ? draw.hit : draw.miss);
    if (!draw.range_knob.empty()) {
      const auto range =
          static_cast<std::uint64_t>(generator::knob_number(policy, draw.range_knob));
      const std::uint64_t n = 1 + orng.below(range);
      if (hit) value = std::to_string(n);
    }
    if (!draw.choices.empty()) {
      const auto choices = split_choices(draw.choices);
      const std::string& choice = choices[orng.below(choices.size())];
      if (hit) value = choice;
    }
    if (!value.empty()) row.apply(target, value);
  }
  // The C interface needs the unpacked API: a case drawn packed keeps the packed interface.
  if (o.aot.api == aot::Options::Api::kPacked) o.aot.interface = aot::Options::Interface::kPacked;
  // USMP's options mean nothing without it, and the workspace holds I/O only behind the C
  // interface (oracle::memory_options_problem): a case drawn otherwise keeps the defaults.
  if (!o.memory.usmp) {
    const oracle::MemoryOptions defaults;
    o.memory.usmp_algorithm = defaults.usmp_algorithm;
    o.memory.pools = defaults.pools;
    o.memory.workspace_io = defaults.workspace_io;
  }
  if (o.aot.interface != aot::Options::Interface::kC) o.memory.workspace_io = false;
  s.options = std::move(o);
  return s;
}

void fix_drawn_knobs(generator::GenPolicy& policy, const oracle::CaseOptions& base,
                     const std::function<bool(const oracle::CaseFlagRow&)>& given) {
  auto holds_hit = [&](const oracle::CaseFlagRow& row) {
    if (row.draw.hit.empty()) return false;
    oracle::CaseOptions hit = base;
    oracle::SutSpec no_system;
    oracle::CaseFlagTarget target{hit, no_system};
    row.apply(target, std::string(row.draw.hit));
    return row.print(hit) == row.print(base);
  };
  for (const auto& row : oracle::case_flag_table()) {
    if (!row.draw.drawn() || !given(row)) continue;
    generator::set_knob(policy, row.draw.knob, holds_hit(row) ? "1" : "0");
  }
  const auto& interface = oracle::case_flag(oracle::CaseFlag::kInterface);
  if (given(interface) && holds_hit(interface)) {
    generator::set_knob(policy, oracle::case_flag(oracle::CaseFlag::kApi).draw.knob, "1");
  }
}

std::string gen_command(const CampaignOptions& options, const CaseSpec& spec) {
  if (!spec.corpus_file.empty()) {
    return "aotfuzz gen --seed " + std::to_string(spec.gen_seed) + " --mutate " +
           host::shell_quote_path(spec.corpus_file);
  }
  const std::string& knobs = options.profiles.empty()
                                 ? options.knob_flags
                                 : options.profiles.at(spec.profile).knob_flags;
  return "aotfuzz gen --seed " + std::to_string(spec.gen_seed) + (options.swarm ? " --swarm" : "") +
         knobs;
}

}  // namespace aotfuzz::fuzz

// The cases of a campaign: shards of the case numbers, and each case a pure function of the
// campaign's seed, its index and the options.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "fuzz/campaign_types.h"
#include "oracle/case_flags.h"

namespace aotfuzz::fuzz {

/// Parses "i/n" with 0 <= i < n; throws CampaignError otherwise.
Shard parse_shard(std::string_view text);
/// The global index of the k-th case of `shard`: k * count + index.
std::uint64_t shard_case(const Shard& shard, std::uint64_t k);

/// The generator seed of case `index` of campaign `seed` (a 64-bit mix of both).
std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index);
/// Case `index`: its profile (CampaignOptions::profiles, by weight, from a stream of its own;
/// none without profiles), then the graph from Rng(case_seed) under the profile's policy (swarm
/// policy first, as `aotfuzz gen --swarm`
/// does; for an odd index with a corpus, generator::mutant of the corpus graph in turn), then the
/// pipeline options and oracles from a second stream: for each row of oracle/case_flags.def
/// marked drawn, in table order, a draw with the policy's knob it names (p_merge, p_unpacked,
/// ...), over `options.base`. Every draw happens whatever a knob holds, so fixing one option
/// leaves the others unchanged.
CaseSpec make_case(const CampaignOptions& options, std::uint64_t index);
/// Fixes the knob of each row of oracle/case_flags.def marked drawn that `given` says the command
/// line gave: 1 when `base` holds the value a hit gives (--merge: p_merge=1), else 0
/// (--no-merge, --api packed; --max-fuse-depth N, whose hits are drawn, keeps N). A given
/// --interface c fixes the unpacked API it needs too. Flags win over knobs: call it last.
void fix_drawn_knobs(generator::GenPolicy& policy, const oracle::CaseOptions& base,
                     const std::function<bool(const oracle::CaseFlagRow&)>& given);
/// The command that prints a case's graph (its origin): `aotfuzz gen --seed <gen_seed> [--swarm]
/// <knobs>`, or `aotfuzz gen --seed <gen_seed> --mutate <file>` for a corpus case.
std::string gen_command(const CampaignOptions& options, const CaseSpec& spec);

}  // namespace aotfuzz::fuzz

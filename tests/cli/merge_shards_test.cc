// Same seed, same cases: a campaign run whole and the same campaign run as three shards, merged,
// hold the same signatures with the same hits (docs/fuzzing.md, "Beyond one machine").
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"

namespace aotfuzz::cli::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// The first kCases cases of seed 5: each shard i/3 runs its share, the cases k = i (mod 3) below
// kCases, as `aotfuzz check --cases` splits them. Each injected bug gives a signature of its own
// in these cases (arity:codegen:kernel, output-unwritten:codegen). About 20 s under ASan.
constexpr int kCases = 300;
const std::vector<std::string> kCampaign = {
    "--inject", "tuple-arg-first-field", "--inject", "dropped-duplicate-output", "-j1",
    "--seed",   "5",                     "--no-reduce", "--quiet"};

void fuzz(const fs::path& findings, int cases, const std::string& shard) {
  std::vector<std::string> args = {"fuzz", "--cases", std::to_string(cases), "--findings",
                                   findings.string()};
  args.insert(args.end(), kCampaign.begin(), kCampaign.end());
  if (!shard.empty()) args.insert(args.end(), {"--shard", shard});
  const auto r = run_aotfuzz(args, 300);
  ASSERT_EQ(r.exit_code, 1) << "a campaign that finds nothing tests nothing here\n"
                            << r.stderr_text;
}

// Hits by signature, as `aotfuzz findings --json` lists them.
std::map<std::string, std::uint64_t> hits(const fs::path& findings) {
  const auto r = run_aotfuzz({"findings", findings.string(), "--json"});
  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  std::map<std::string, std::uint64_t> out;
  for (const auto& b : json::parse(r.stdout_text)) out[b.at("signature")] = b.at("hits");
  return out;
}

TEST(MergeShards, ThreeShardsMergedHoldTheSignaturesAndHitsOfTheWholeCampaign) {
  host::TempDir t("aotfuzz-merge-shards");
  const fs::path whole = t.file("whole");
  fuzz(whole, kCases, "");
  std::vector<std::string> merge = {"merge", "--into", t.file("merged").string()};
  std::uint64_t shard_hits = 0;
  for (int i = 0; i < 3; ++i) {
    const fs::path shard = t.file("shard-" + std::to_string(i));
    fuzz(shard, (kCases + 2 - i) / 3, std::to_string(i) + "/3");
    for (const auto& [signature, n] : hits(shard)) shard_hits += n;
    merge.push_back(shard.string());
  }
  const auto r = run_aotfuzz(merge);
  ASSERT_EQ(r.exit_code, 0) << r.stderr_text;

  const auto merged = hits(t.file("merged"));
  const auto expected = hits(whole);
  EXPECT_GE(expected.size(), 2u);
  EXPECT_EQ(merged, expected);
  std::uint64_t merged_hits = 0;
  for (const auto& [signature, n] : merged) merged_hits += n;
  EXPECT_EQ(merged_hits, shard_hits);
}

}  // namespace
}  // namespace aotfuzz::cli::test

// Merging findings directories (bundles/merge_findings.h), on directories laid out by hand as
// campaigns lay them out: bundles, seen.json, campaign records, plot_data, fuzzer_stats.
#include "bundles/merge_findings.h"

#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>

#include "bundles/bundle.h"
#include "bundles/findings_list.h"
#include "bundles/status_files.h"
#include "host/tempdir.h"
#include "report/html_report.h"
#include "tests/support/files.h"

namespace aotfuzz::bundles {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::read_text;
using test_support::write_file;

// A reduced graph of `ops` adds on one input.
std::string graph(int ops) {
  std::string body = "%x0";
  for (int i = 0; i < ops; ++i) body = "add(" + body + ", %x0)";
  return "def @main(%x0: Tensor[(2), float32]) -> Tensor[(2), float32] {\n  " + body + "\n}\n";
}

struct BundleSpec {
  std::string signature = "arity:codegen:kernel";
  int ops = 3;
  std::uint64_t hits = 1;
  std::time_t first_seen = 1000, last_seen = 1100;
  std::string origin = "case 1";
  json extra = json::object();  // merged into verdict.json
};

// A bundle as a campaign writes it (bundles/bundle.cc), in findings directory `dir`.
fs::path add_bundle(const fs::path& dir, const BundleSpec& s) {
  const fs::path b = dir / bundle_dir_name(s.signature);
  fs::create_directories(b / "c");
  const std::string header = "// origin: " + s.origin + "\n// finding: " + s.signature + "\n";
  write_file(b / "original.relay", header + graph(s.ops + 2));
  write_file(b / "reduced.relay",
             header + "// replay: --merge => " + s.signature + "\n" + graph(s.ops));
  const std::string replay = "aotfuzz run " + (b / "reduced.relay").string() + " --merge";
  json v = {
      {"signature", s.signature},
      {"flags", "--merge"},
      {"replay", replay},
      {"verdict", {{"summary", s.signature + " here"}}},
      {"info",
       {{"origin", s.origin},
        {"reduction",
         {{"complete", true}, {"after", {{"ops", s.ops}, {"inputs", 1}, {"nodes", s.ops + 1}}}}}}}};
  v.update(s.extra);
  write_file(b / "verdict.json", v.dump(2) + "\n");
  write_file(b / "replay.txt", replay + "\n");
  write_file(b / "c" / "main.c", "int main(void) { return " + std::to_string(s.ops) + "; }\n");
  write_file(b / "seen.json", json{{"first_seen", s.first_seen},
                                   {"last_seen", s.last_seen},
                                   {"hits", s.hits},
                                   {"campaigns", 1}}
                                      .dump(2) +
                                  "\n");
  return b;
}

// A campaign's status files and record, as status_files.cc writes them.
void add_campaign(const fs::path& dir, std::time_t start, std::uint64_t cases) {
  fs::create_directories(dir / "campaigns");
  write_file(dir / "campaigns" / (std::to_string(start) + "-7-001.json"),
             json{
                 {"start_time", start},
                 {"last_update", start + 10},
                 {"seed", 5},
                 {"jobs", 1},
                 {"elapsed_s", 10.0},
                 {"cases", cases},
                 {"finding_cases",
                  2}}.dump(2) +
                 "\n");
  write_file(dir / "plot_data", std::string(kPlotDataHeader) + "\n" + std::to_string(start + 5) +
                                    ", 5, " + std::to_string(cases / 2) +
                                    ", 1.00, 1, 1, 0, 0, 0\n" + std::to_string(start + 10) +
                                    ", 10, " + std::to_string(cases) + ", 1.00, 1, 2, 0, 0, 0\n");
  write_file(dir / "fuzzer_stats", "cases_done              : " + std::to_string(cases) + "\n");
}

// Every file under `dir` with its content: what "changes nothing" compares.
std::map<std::string, std::string> tree(const fs::path& dir) {
  std::map<std::string, std::string> out;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    const std::string rel = fs::relative(e.path(), dir).string();
    out[rel] = e.is_regular_file() ? read_text(e.path()) : std::string("<dir>");
  }
  return out;
}

struct Shards {
  host::TempDir root{"aotfuzz-merge-test"};
  fs::path s0 = root.file("shard-0"), s1 = root.file("shard-1"), out = root.file("merged");
};

TEST(MergeFindings, KeepsOneBundlePerSignatureWithTheSmallestReducedGraph) {
  Shards t;
  add_bundle(t.s0, {.ops = 5, .origin = "shard 0"});
  add_bundle(t.s1, {.ops = 2, .origin = "shard 1"});
  add_bundle(t.s1, {.signature = "mismatch:run", .ops = 4});
  add_campaign(t.s0, 100, 10);
  add_campaign(t.s1, 100, 10);

  const MergeResult r = merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);

  EXPECT_EQ(r.signatures, 2u);
  EXPECT_EQ(r.added, 2u);
  const auto bundles = list_bundles(t.out);
  ASSERT_EQ(bundles.size(), 2u);
  EXPECT_EQ(bundles[0].signature, "arity:codegen:kernel");
  EXPECT_EQ(bundles[0].reduced_ops, 2);
  EXPECT_NE(read_text(bundles[0].dir / "reduced.relay").find("shard 1"), std::string::npos);
  // The rest of the bundle came with it.
  EXPECT_EQ(read_text(bundles[0].dir / "c" / "main.c"), "int main(void) { return 2; }\n");
  EXPECT_EQ(bundles[1].signature, "mismatch:run");
}

TEST(MergeFindings, TheSmallerGraphWinsWhateverTheOrderOfTheSources) {
  Shards t;
  add_bundle(t.s0, {.ops = 2, .origin = "shard 0"});
  add_bundle(t.s1, {.ops = 6, .origin = "shard 1"});
  merge_findings(t.out, {t.s1, t.s0}, report::write_report_page);
  EXPECT_EQ(list_bundles(t.out).at(0).reduced_ops, 2);
}

TEST(MergeFindings, SumsTheHitsAndCampaignsOfEverySourceIntoSeenJson) {
  Shards t;
  add_bundle(t.s0, {.hits = 7, .first_seen = 900, .last_seen = 1500});
  add_bundle(t.s1, {.hits = 4, .first_seen = 800, .last_seen = 1200});
  merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);
  const SeenRecord seen = read_seen(t.out / bundle_dir_name("arity:codegen:kernel"));
  EXPECT_EQ(seen.hits, 11u);
  EXPECT_EQ(seen.campaigns, 2u);
  EXPECT_EQ(seen.first_seen, 800);
  EXPECT_EQ(seen.last_seen, 1500);
}

TEST(MergeFindings, KeepsEverySourcesGraphAsFoundUnderExamples) {
  Shards t;
  add_bundle(t.s0, {.ops = 5, .origin = "shard 0"});
  add_bundle(t.s1, {.ops = 2, .origin = "shard 1"});
  merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);
  const fs::path examples = t.out / bundle_dir_name("arity:codegen:kernel") / "examples";
  EXPECT_EQ(read_text(examples / "shard-0.relay"),
            read_text(t.s0 / bundle_dir_name("arity:codegen:kernel") / "original.relay"));
  EXPECT_EQ(read_text(examples / "shard-1.relay"),
            read_text(t.s1 / bundle_dir_name("arity:codegen:kernel") / "original.relay"));
}

TEST(MergeFindings, KeepsEachSourcesCampaignRecordsAndPlotDataUnderItsName) {
  Shards t;
  add_bundle(t.s0, {});
  // Both shards started in the same second with the same pid: their records share a name.
  add_campaign(t.s0, 100, 10);
  add_campaign(t.s1, 100, 30);
  const MergeResult r = merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);

  EXPECT_EQ(r.campaigns, 2u);
  const json r0 = json::parse(read_text(t.out / "campaigns" / "shard-0--100-7-001.json"));
  const json r1 = json::parse(read_text(t.out / "campaigns" / "shard-1--100-7-001.json"));
  EXPECT_EQ(r0.at("cases"), 10);
  EXPECT_EQ(r1.at("cases"), 30);
  EXPECT_EQ(r1.at("source"), "shard-1");
  EXPECT_EQ(read_text(t.out / "sources" / "shard-1" / "plot_data"), read_text(t.s1 / "plot_data"));
  EXPECT_EQ(read_text(t.out / "sources" / "shard-0" / "fuzzer_stats"),
            read_text(t.s0 / "fuzzer_stats"));

  // The report is over the whole: both campaigns' cases, each source named, both plots.
  const report::ReportInput in = report::load_report_input(t.out);
  EXPECT_EQ(in.plot.size(), 4u);
  const std::string page = read_text(t.out / "report.html");
  EXPECT_NE(page.find("2 campaigns, 40 cases"), std::string::npos) << page.substr(0, 2000);
  EXPECT_NE(page.find("<td>shard-1</td>"), std::string::npos);
}

TEST(MergeFindings, MergingTwiceChangesNothing) {
  Shards t;
  add_bundle(t.s0, {.ops = 5, .hits = 3});
  add_bundle(t.s1, {.ops = 2, .hits = 2});
  add_bundle(t.s1, {.signature = "mismatch:run"});
  add_campaign(t.s0, 100, 10);
  merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);
  const auto before = tree(t.out);

  const MergeResult again = merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);

  EXPECT_FALSE(again.changed);
  EXPECT_EQ(again.added + again.replaced + again.updated, 0u);
  EXPECT_EQ(tree(t.out), before);
  EXPECT_EQ(read_seen(t.out / bundle_dir_name("arity:codegen:kernel")).hits, 5u);
}

TEST(MergeFindings, AReplayRecordedInSeenJsonStaysWhenTheMergeKeepsTheBundle) {
  Shards t;
  add_bundle(t.s0, {.hits = 3});
  merge_findings(t.out, {t.s0}, report::write_report_page);
  // `aotfuzz findings --rerun` records its replay of the bundle in seen.json.
  const fs::path seen = t.out / bundle_dir_name("arity:codegen:kernel") / "seen.json";
  json j = json::parse(read_text(seen));
  j["rerun"] = {{"time", 5000}, {"reproduces", true}};
  write_file(seen, j.dump(2) + "\n");

  EXPECT_FALSE(merge_findings(t.out, {t.s0}, report::write_report_page).changed);
  EXPECT_EQ(json::parse(read_text(seen)).at("rerun").at("reproduces"), true);
}

TEST(MergeFindings, ABundleACampaignIsStillBuildingInASourceIsLeftOut) {
  Shards t;
  add_bundle(t.s0, {});
  // bundles/bundle.cc builds a bundle in .tmp-<pid>-XXXXXX, then renames it into place.
  const fs::path building = t.s0 / (".tmp-" + std::to_string(::getpid()) + "-abcdef");
  fs::rename(add_bundle(t.root.file("half"), {.signature = "mismatch:run"}), building);

  merge_findings(t.out, {t.s0}, report::write_report_page);

  const auto bundles = list_bundles(t.out);
  ASSERT_EQ(bundles.size(), 1u);
  EXPECT_EQ(bundles[0].signature, "arity:codegen:kernel");
}

TEST(MergeFindings, ASourceMergedAgainAfterItRanOnCountsEachHitOnce) {
  Shards t;
  add_bundle(t.s0, {.hits = 3});
  add_bundle(t.s1, {.hits = 2});
  merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);
  // Shard 0 ran on: its seen.json now counts 8 hits, the 3 already merged among them.
  add_bundle(t.s0, {.hits = 8, .last_seen = 2000});

  const MergeResult r = merge_findings(t.out, {t.s0}, report::write_report_page);

  EXPECT_EQ(r.updated, 1u);
  const SeenRecord seen = read_seen(t.out / bundle_dir_name("arity:codegen:kernel"));
  EXPECT_EQ(seen.hits, 10u);
  EXPECT_EQ(seen.campaigns, 2u);
  EXPECT_EQ(seen.last_seen, 2000);
}

TEST(MergeFindings, HitsACampaignAddedInTheMergedDirectoryStayWhenASourceIsMergedAgain) {
  Shards t;
  add_bundle(t.s0, {.hits = 3});
  merge_findings(t.out, {t.s0}, report::write_report_page);
  record_seen(t.out / bundle_dir_name("arity:codegen:kernel"), 4, 3000);
  merge_findings(t.out, {t.s0}, report::write_report_page);
  EXPECT_EQ(read_seen(t.out / bundle_dir_name("arity:codegen:kernel")).hits, 7u);
}

TEST(MergeFindings, ABundleACampaignWroteInTheTargetKeepsItsGraphWhenASmallerOneReplacesIt) {
  Shards t;
  const fs::path own = add_bundle(t.out, {.ops = 9, .hits = 5, .origin = "the target's own"});
  const std::string own_original = read_text(own / "original.relay");
  add_bundle(t.s0, {.ops = 1, .hits = 1});

  const MergeResult r = merge_findings(t.out, {t.s0}, report::write_report_page);

  EXPECT_EQ(r.replaced, 1u);
  EXPECT_EQ(list_bundles(t.out).at(0).reduced_ops, 1);
  EXPECT_EQ(read_text(own / "examples" / "merged.relay"), own_original);
  EXPECT_EQ(read_seen(own).hits, 6u);
  // No temporary directory is left behind.
  for (const auto& e : fs::directory_iterator(t.out)) {
    EXPECT_NE(e.path().filename().string().rfind(".tmp-", 0), 0u) << e.path();
  }
}

TEST(MergeFindings, NeverWritesIntoASource) {
  Shards t;
  add_bundle(t.s0, {.ops = 5});
  add_bundle(t.s1, {.ops = 2});
  add_campaign(t.s0, 100, 10);
  const auto s0 = tree(t.s0), s1 = tree(t.s1);
  merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);
  merge_findings(t.out, {t.s1, t.s0}, report::write_report_page);
  EXPECT_EQ(tree(t.s0), s0);
  EXPECT_EQ(tree(t.s1), s1);
}

TEST(MergeFindings, PointsTheReplayCommandIntoTheMergedDirectory) {
  Shards t;
  add_bundle(t.s0, {});
  merge_findings(t.out, {t.s0}, report::write_report_page);
  const fs::path b = fs::absolute(t.out) / bundle_dir_name("arity:codegen:kernel");
  const std::string want = "aotfuzz run " + (b / "reduced.relay").string() + " --merge";
  EXPECT_EQ(json::parse(read_text(b / "verdict.json")).at("replay"), want);
  EXPECT_EQ(read_text(b / "replay.txt"), want + "\n");
}

TEST(MergeFindings, CarriesTriageAndBisectionToTheBundleItKeeps) {
  Shards t;
  const json triage = {{"builds", json::array({{{"build", "v0.8.0"}, {"outcome", "reproduces"}}})}};
  const json bisect = {{"kind", "introduced"}, {"answered", true}, {"commit", "abc"}};
  add_bundle(t.s0, {.ops = 5, .extra = {{"triage", triage}, {"bisect", bisect}}});
  add_bundle(t.s1, {.ops = 2});
  merge_findings(t.out, {t.s0, t.s1}, report::write_report_page);
  const auto b = list_bundles(t.out).at(0);
  EXPECT_EQ(b.reduced_ops, 2);
  EXPECT_EQ(b.triage, triage);
  EXPECT_EQ(b.bisect, bisect);
}

TEST(MergeFindings, RefusesWhileAnotherMergeIsWritingIntoTheTarget) {
  Shards t;
  add_bundle(t.s0, {});
  fs::create_directories(t.out);
  const int fd = ::open((t.out / ".merge.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  EXPECT_THROW(merge_findings(t.out, {t.s0}, report::write_report_page), MergeBusy);
  EXPECT_TRUE(list_bundles(t.out).empty());
  ::close(fd);
  EXPECT_EQ(merge_findings(t.out, {t.s0}, report::write_report_page).added, 1u);
}

TEST(MergeFindings, RefusesATargetAmongItsSourcesAndTwoSourcesOfOneName) {
  Shards t;
  add_bundle(t.s0, {});
  const fs::path other = t.root.file("elsewhere") / "shard-0";
  add_bundle(other, {});
  EXPECT_THROW(merge_findings(t.s0, {t.s0}), MergeUsageError);
  EXPECT_THROW(merge_findings(t.s0 / "merged", {t.s0}), MergeUsageError);
  EXPECT_THROW(merge_findings(t.out, {t.s0, other}, report::write_report_page), MergeUsageError);
  EXPECT_THROW(merge_findings(t.out, {t.root.file("missing")}, report::write_report_page),
               MergeUsageError);
  EXPECT_FALSE(fs::exists(t.out));
}

TEST(MergeFindings, AMergedDirectoryMergesIntoAnotherWithItsSourcesNamed) {
  Shards t;
  add_bundle(t.s0, {.hits = 2});
  add_campaign(t.s0, 100, 10);
  merge_findings(t.out, {t.s0}, report::write_report_page);
  const fs::path outer = t.root.file("outer");
  merge_findings(outer, {t.out});
  EXPECT_TRUE(fs::exists(outer / "campaigns" / "merged--shard-0--100-7-001.json"));
  EXPECT_TRUE(fs::exists(outer / "sources" / "merged--shard-0" / "plot_data"));
  EXPECT_TRUE(
      fs::exists(outer / bundle_dir_name("arity:codegen:kernel") / "examples" / "shard-0.relay"));
  EXPECT_EQ(read_seen(outer / bundle_dir_name("arity:codegen:kernel")).hits, 2u);
}

}  // namespace
}  // namespace aotfuzz::bundles

// The files a monitor reads while a campaign runs (bundles/status_files.h) and the listing of a
// findings directory (bundles/findings_list.h).
#include "bundles/status_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "bundles/bundle.h"
#include "bundles/findings_list.h"
#include "fuzz/campaign.h"
#include "host/tempdir.h"
#include "tests/support/files.h"

namespace aotfuzz::bundles {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> lines_of(const fs::path& path) {
  std::ifstream in(path);
  std::vector<std::string> out;
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

StatusSnapshot snapshot(std::uint64_t cases) {
  StatusSnapshot s;
  s.progress.elapsed_s = 10;
  s.progress.cases = cases;
  s.stats.cases = cases;
  s.stats.verdicts[static_cast<int>(oracle::VerdictKind::kStructure)]
                  [static_cast<int>(oracle::Stage::kFuse)] = 3;
  s.stats.passes_us = 6'000'000;
  s.stats.run_us = 2'000'000;
  s.start_time = 1'000'000;
  s.now = 1'000'010;
  return s;
}

TEST(StatusFiles, FuzzerStatsHoldsTheKeysAMonitorReads) {
  const std::string text = fuzzer_stats_text(snapshot(500));
  for (const char* key :
       {"start_time", "last_update", "cases_done", "cases_per_sec", "unique_signatures",
        "last_new_finding", "verdicts_structure", "time_share_passes"}) {
    EXPECT_NE(text.find(std::string(key)), std::string::npos) << key << "\n" << text;
  }
  EXPECT_NE(text.find("cases_done              : 500\n"), std::string::npos) << text;
  EXPECT_NE(text.find("cases_per_sec           : 50.00\n"), std::string::npos) << text;
  // Shares of worker time (10 s x 1 job), as the summary gives them: the rest is "other".
  EXPECT_NE(text.find("time_share_passes       : 60.0\n"), std::string::npos) << text;
  EXPECT_NE(text.find("time_share_other        : 20.0\n"), std::string::npos) << text;
}

TEST(StatusFiles, PlotDataKeepsTheRowsOfEarlierCampaignsAndAddsOnePerUpdate) {
  host::TempDir dir("aotfuzz-status-test");
  {
    StatusFiles first(dir.path());
    first.update(snapshot(10));
    first.update(snapshot(20));
  }
  StatusFiles second(dir.path());
  second.update(snapshot(5));
  const auto lines = lines_of(dir.path() / "plot_data");
  ASSERT_EQ(lines.size(), 4u);
  EXPECT_EQ(lines[0], kPlotDataHeader);
  EXPECT_EQ(lines[1].substr(0, 27), "1000010, 10, 10, 1.00, 0, 0");
  EXPECT_EQ(lines[3].substr(0, 26), "1000010, 10, 5, 0.50, 0, 0");
  for (std::size_t i = 1; i < lines.size(); ++i) {
    EXPECT_EQ(std::count(lines[i].begin(), lines[i].end(), ','), 8) << lines[i];
  }
  // Written aside and renamed: no temporary file is left.
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(dir.path())) names.insert(e.path().filename());
  EXPECT_EQ(names, (std::set<std::string>{"campaigns", "fuzzer_stats", "plot_data"}));
  // Both started in the same second of one process, and each has a record of its own.
  const auto records = read_campaign_records(dir.path());
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("cases").get<std::uint64_t>(), 20u);
  EXPECT_EQ(records[1].at("cases").get<std::uint64_t>(), 5u);
}

TEST(StatusFiles, TwoCampaignsAtOnceOnOneDirectoryEachKeepTheirOwnStatsAndPlotData) {
  host::TempDir dir("aotfuzz-status-test");
  StatusFiles first(dir.path());
  StatusFiles second(dir.path());
  first.update(snapshot(10));
  second.update(snapshot(5));
  // The second campaign's update leaves the directory's files as the first wrote them.
  auto lines = lines_of(dir.path() / "plot_data");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1].substr(0, 27), "1000010, 10, 10, 1.00, 0, 0");
  EXPECT_NE(read_text_file(dir.path() / "fuzzer_stats").find("cases_done              : 10\n"),
            std::string::npos);
  first.update(snapshot(20));
  lines = lines_of(dir.path() / "plot_data");
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[2].substr(0, 27), "1000010, 10, 20, 2.00, 0, 0");
  // The second says whose they are and keeps its own next to its record.
  EXPECT_EQ(first.other_owner(), 0);
  EXPECT_EQ(second.other_owner(), static_cast<long>(::getpid()));
  EXPECT_EQ(second.stats_path().parent_path(), dir.path() / "campaigns");
  EXPECT_NE(read_text_file(second.stats_path()).find("cases_done              : 5\n"),
            std::string::npos);
  EXPECT_EQ(read_all_plot_data(dir.path()).size(), 3u);
}

TEST(StatusFiles, SeenRecordsAddUpAcrossCampaigns) {
  host::TempDir dir("aotfuzz-status-test");
  EXPECT_EQ(read_seen(dir.path()).hits, 0u);
  record_seen(dir.path(), 7, 100);
  record_seen(dir.path(), 2, 250);
  const SeenRecord r = read_seen(dir.path());
  EXPECT_EQ(r.first_seen, 100);
  EXPECT_EQ(r.last_seen, 250);
  EXPECT_EQ(r.hits, 9u);
  EXPECT_EQ(r.campaigns, 2u);
}

TEST(StatusFiles, ACampaignRecordingAsItGoesCountsItselfOnce) {
  host::TempDir dir("aotfuzz-status-test");
  record_seen(dir.path(), 3, 100, /*new_campaign=*/true);
  record_seen(dir.path(), 4, 105, /*new_campaign=*/false);
  const SeenRecord r = read_seen(dir.path());
  EXPECT_EQ(r.first_seen, 100);
  EXPECT_EQ(r.last_seen, 105);
  EXPECT_EQ(r.hits, 7u);
  EXPECT_EQ(r.campaigns, 1u);
}

TEST(StatusFiles, ACampaignWritesItsStatusFilesAndEachBundleCountsItsHits) {
  host::TempDir dir("aotfuzz-status-test");
  fuzz::CampaignOptions o;
  o.seed = 3;
  o.max_cases = 40;
  o.jobs = 2;
  o.base.in_process_only = true;
  o.base.aot.bugs.enable(aot::Bug::kFuseStopsAtTupleGetItem);
  o.reduce = false;
  o.findings_dir = dir.path();
  o.status_interval = std::chrono::milliseconds(1);
  const fuzz::CampaignResult r = run_campaign(o);
  ASSERT_FALSE(r.findings.empty());
  const auto stats = lines_of(dir.path() / "fuzzer_stats");
  EXPECT_NE(std::find(stats.begin(), stats.end(), "cases_done              : 40"), stats.end());
  // The header, a row at the start (no cases yet) and at least the final one.
  const auto rows = parse_plot_data(read_text_file(dir.path() / "plot_data"));
  ASSERT_GE(rows.size(), 2u);
  EXPECT_EQ(rows.front().cases, 0u);
  EXPECT_EQ(rows.back().cases, 40u);
  const auto records = read_campaign_records(dir.path());
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].at("cases").get<std::uint64_t>(), 40u);
  EXPECT_EQ(records[0].at("seed").get<std::uint64_t>(), 3u);

  const auto bundles = list_bundles(dir.path());
  ASSERT_EQ(bundles.size(), r.findings.size());
  std::uint64_t hits = 0;
  for (const auto& b : bundles) {
    EXPECT_EQ(b.seen.campaigns, 1u) << b.signature;
    EXPECT_EQ(b.seen.hits, r.signature_hits.at(b.signature));
    hits += b.seen.hits;
  }
  EXPECT_EQ(hits, r.stats.finding_cases);
  EXPECT_NE(findings_table(bundles).find(bundles[0].signature), std::string::npos);
  EXPECT_EQ(to_json(bundles)[0].at("hits"), bundles[0].seen.hits);
}

TEST(FindingsList, ARerunMarksABundleThatNoLongerReproducesAsFixed) {
  host::TempDir dir("aotfuzz-findings-test");
  auto make = [&](const std::string& name, const std::string& expectation) {
    fs::create_directories(dir.path() / name);
    std::ofstream(dir.path() / name / "verdict.json")
        << R"({"signature": ")" << name << R"(", "replay": "aotfuzz run x", "info": {}})";
    std::ofstream(dir.path() / name / "reduced.relay")
        << "// replay: " << expectation << "\n"
        << test_support::read_text(
               test_support::source_path("corpus/seed/tvm_9036_annotated.relay"));
  };
  // The first still gives its finding with the bug injected; the second expects a finding the
  // correct pipeline no longer makes.
  make("arity_codegen_kernel", "--merge --inject tuple-arg-first-field --no-run => arity:codegen");
  make("mismatch_fuse", "--merge --no-run => mismatch:fuse");
  auto bundles = list_bundles(dir.path());
  ASSERT_EQ(bundles.size(), 2u);
  for (auto& b : bundles) rerun_bundle(b);
  EXPECT_EQ(bundles[0].signature, "arity_codegen_kernel");
  EXPECT_TRUE(*bundles[0].reproduces) << bundles[0].rerun_detail;
  EXPECT_FALSE(*bundles[1].reproduces);
  EXPECT_NE(findings_table(bundles).find("no (fixed)"), std::string::npos);
  const auto seen = nlohmann::json::parse(read_text_file(bundles[1].dir / "seen.json"));
  EXPECT_EQ(seen.at("rerun").at("reproduces"), false);
}

}  // namespace
}  // namespace aotfuzz::bundles

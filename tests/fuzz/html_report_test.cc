// The HTML report of a findings directory (fuzz/html_report.h) and the campaign records and
// plot_data it reads (fuzz/status_files.h). The page in a real browser: report_in_browser.py.
#include "fuzz/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <regex>

#include "oracle/tempdir.h"
#include "tests/support/files.h"

namespace aotfuzz::fuzz {
namespace {

namespace fs = std::filesystem;
using test_support::write_file;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

StatusSnapshot snapshot(std::time_t start, double elapsed, std::uint64_t cases) {
  StatusSnapshot s;
  s.start_time = start;
  s.now = start + static_cast<std::time_t>(elapsed);
  s.progress.elapsed_s = elapsed;
  s.progress.cases = cases;
  s.progress.unique_signatures = 2;
  s.stats.cases = cases;
  s.stats.cases_with_multi_output_region = cases / 2;
  s.stats.merge_on = cases / 4;
  s.stats.verdicts[static_cast<int>(oracle::VerdictKind::kPass)]
                  [static_cast<int>(oracle::Stage::kRun)] = cases - 3;
  s.stats.verdicts[static_cast<int>(oracle::VerdictKind::kArity)]
                  [static_cast<int>(oracle::Stage::kCodegen)] = 3;
  return s;
}

void write_bundle(const fs::path& dir, const std::string& signature, const std::string& svg) {
  fs::create_directories(dir);
  const nlohmann::json j = {{"signature", signature},
                            {"replay", "aotfuzz run 'a b/reduced.relay' --merge"},
                            {"verdict", {{"summary", "kernel called with 2 of 3 <args>"}}},
                            {"info", {{"reduction", {{"after", {{"ops", 2}}}}}}}};
  write_file(dir / "verdict.json", j.dump());
  write_file(dir / "reduced.svg", svg);
}

constexpr const char* kGraphvizSvg =
    "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
    "<!DOCTYPE svg PUBLIC \"-//W3C//DTD SVG 1.1//EN\" "
    "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n"
    "<svg width=\"62pt\" height=\"44pt\" viewBox=\"0 0 62 44\" "
    "xmlns=\"http://www.w3.org/2000/svg\"><g id=\"graph0\"><text>add</text></g></svg>\n";

TEST(PlotData, RowsReadBackAsTheyWereWrittenAndMalformedLinesAreSkipped) {
  auto s = snapshot(1'000'000, 12, 600);
  s.stats.cases_with_fused_tuple_param = 7;
  const std::string text = std::string(kPlotDataHeader) + "\n" + plot_data_row(s) +
                           "\n1, 2, 3\nnot a row\n" + plot_data_row(snapshot(1'000'100, 5, 9)) +
                           " trailing\n";
  const auto rows = parse_plot_data(text);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].unix_time, 1'000'012);
  EXPECT_EQ(rows[0].relative_time, 12);
  EXPECT_EQ(rows[0].cases, 600u);
  EXPECT_DOUBLE_EQ(rows[0].cases_per_sec, 50.0);
  EXPECT_EQ(rows[0].multi_output_cases, 300u);
  EXPECT_EQ(rows[0].fused_tuple_param_cases, 7u);
}

TEST(CampaignRecords, EachCampaignKeepsOneRecordThatItsLatestUpdateReplaces) {
  oracle::TempDir dir("aotfuzz-report-test");
  {
    StatusFiles first(dir.path());
    first.update(snapshot(1'000'000, 5, 100));
    first.update(snapshot(1'000'000, 10, 200));
  }
  StatusFiles second(dir.path());
  second.update(snapshot(900'000, 3, 30));
  const auto records = read_campaign_records(dir.path());
  // Same process, so the two campaigns differ by start time; records sort by it.
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("start_time").get<std::time_t>(), 900'000);
  EXPECT_EQ(records[1].at("cases").get<std::uint64_t>(), 200u);
  EXPECT_EQ(records[1].at("verdicts").at("arity").at("stages").at("codegen").get<int>(), 3);
  EXPECT_EQ(records[1].at("features").at("cases_with_multi_output_region").get<int>(), 100);
}

TEST(HtmlReport, APageShowsEveryCampaignBundleAndVerdictAndLoadsNothing) {
  oracle::TempDir dir("aotfuzz-report-test");
  {
    StatusFiles a(dir.path());
    a.update(snapshot(1'000'000, 5, 100));
    a.update(snapshot(1'000'000, 10, 250));
  }
  {
    StatusFiles b(dir.path());
    b.update(snapshot(1'000'020, 5, 80));
  }
  write_bundle(dir.path() / "arity_codegen_kernel", "arity:codegen:kernel", kGraphvizSvg);
  write_bundle(dir.path() / "mismatch_codegen", "mismatch:codegen", kGraphvizSvg);
  const ReportInput input = load_report_input(dir.path());
  ASSERT_EQ(input.campaigns.size(), 2u);
  ASSERT_EQ(input.plot.size(), 3u);
  const std::string page = render_report(input);

  EXPECT_EQ(page.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count(page, "<tr class=\"bundle\""), 2u);
  // The pictures are inlined without graphviz's prolog; three plots of lines.
  EXPECT_EQ(count(page, "<?xml"), 0u);
  EXPECT_EQ(count(page, "<g id=\"graph0\">"), 2u);
  EXPECT_EQ(count(page, "<svg class=\"plot\""), 3u);
  // Two campaigns in plot_data: one polyline per campaign and series (1 + 2 + 3 series), and a
  // dashed line where the second campaign starts in each plot.
  EXPECT_EQ(count(page, "<polyline"), 2u * 6u);
  EXPECT_EQ(count(page, "class=\"campaign-start\""), 3u);
  // Verdicts summed over both campaigns' records: 3 arity verdicts each.
  EXPECT_NE(page.find("<tr><td>arity</td>"), std::string::npos);
  const std::regex arity_total("<tr><td>arity</td>.*<td class=\"n\">6</td></tr>");
  EXPECT_TRUE(std::regex_search(page, arity_total)) << page;
  EXPECT_NE(page.find("330 cases"), std::string::npos);
  // Text from the directory is escaped; nothing is loaded or run.
  EXPECT_NE(page.find("of 3 &lt;args&gt;"), std::string::npos);
  EXPECT_NE(page.find("aotfuzz run &#39;a b/reduced.relay&#39; --merge"), std::string::npos);
  EXPECT_EQ(count(page, "<script"), 0u);
  EXPECT_EQ(count(page, "<link"), 0u);
  EXPECT_EQ(count(page, "src="), 0u);
  EXPECT_EQ(render_report(input), page);
}

TEST(HtmlReport, APictureThatCouldRunCodeIsLeftOut) {
  oracle::TempDir dir("aotfuzz-report-test");
  write_bundle(dir.path() / "a", "mismatch:codegen",
               "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>alert(1)</script></svg>");
  write_bundle(dir.path() / "b", "mismatch:run",
               "<svg xmlns=\"http://www.w3.org/2000/svg\" onload=\"alert(1)\"></svg>");
  write_bundle(dir.path() / "c", "arity:codegen:kernel", kGraphvizSvg);
  const ReportInput input = load_report_input(dir.path());
  ASSERT_EQ(input.bundles.size(), 3u);
  const std::string page = render_report(input);
  EXPECT_EQ(count(page, "alert("), 0u);
  EXPECT_EQ(count(page, "no picture"), 2u);
  EXPECT_EQ(count(page, "<g id=\"graph0\">"), 1u);
}

TEST(HtmlReport, AnEmptyDirectoryGivesAPageSayingSo) {
  oracle::TempDir dir("aotfuzz-report-test");
  const std::string page = render_report(load_report_input(dir.path()));
  EXPECT_NE(page.find("No plot_data"), std::string::npos);
  EXPECT_NE(page.find("No bundles"), std::string::npos);
  EXPECT_NE(page.find("0 campaigns, 0 cases"), std::string::npos);
}

TEST(HtmlReport, AMissingDirectoryIsAnError) {
  EXPECT_THROW(load_report_input("/nonexistent/aotfuzz-report"), std::system_error);
}

}  // namespace
}  // namespace aotfuzz::fuzz

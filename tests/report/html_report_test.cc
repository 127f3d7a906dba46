// The HTML report of a findings directory (report/html_report.h) and the campaign records and
// plot_data it reads (bundles/status_files.h). The page in a real browser: report_in_browser.py.
#include "report/html_report.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>

#include "host/tempdir.h"
#include "tests/support/files.h"

namespace aotfuzz::report {
namespace {

namespace fs = std::filesystem;
using test_support::write_file;

std::size_t count(const std::string& text, const std::string& needle) {
  std::size_t n = 0;
  for (auto p = text.find(needle); p != std::string::npos; p = text.find(needle, p + 1)) ++n;
  return n;
}

bundles::StatusSnapshot snapshot(std::time_t start, double elapsed, std::uint64_t cases) {
  bundles::StatusSnapshot s;
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
  const std::string text = std::string(bundles::kPlotDataHeader) + "\n" +
                           bundles::plot_data_row(s) + "\n1, 2, 3\nnot a row\n" +
                           bundles::plot_data_row(snapshot(1'000'100, 5, 9)) + " trailing\n";
  const auto rows = bundles::parse_plot_data(text);
  ASSERT_EQ(rows.size(), 1u);
  EXPECT_EQ(rows[0].unix_time, 1'000'012);
  EXPECT_EQ(rows[0].relative_time, 12);
  EXPECT_EQ(rows[0].cases, 600u);
  EXPECT_DOUBLE_EQ(rows[0].cases_per_sec, 50.0);
  EXPECT_EQ(rows[0].multi_output_cases, 300u);
  EXPECT_EQ(rows[0].fused_tuple_param_cases, 7u);
}

TEST(CampaignRecords, EachCampaignKeepsOneRecordThatItsLatestUpdateReplaces) {
  host::TempDir dir("aotfuzz-report-test");
  {
    bundles::StatusFiles first(dir.path());
    first.update(snapshot(1'000'000, 5, 100));
    first.update(snapshot(1'000'000, 10, 200));
  }
  bundles::StatusFiles second(dir.path());
  second.update(snapshot(900'000, 3, 30));
  const auto records = bundles::read_campaign_records(dir.path());
  // Same process, so the two campaigns differ by start time; records sort by it.
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].at("start_time").get<std::time_t>(), 900'000);
  EXPECT_EQ(records[1].at("cases").get<std::uint64_t>(), 200u);
  EXPECT_EQ(records[1].at("verdicts").at("arity").at("stages").at("codegen").get<int>(), 3);
  EXPECT_EQ(records[1].at("features").at("cases_with_multi_output_region").get<int>(), 100);
}

TEST(HtmlReport, APageShowsEveryCampaignBundleAndVerdictAndLoadsNothing) {
  host::TempDir dir("aotfuzz-report-test");
  {
    bundles::StatusFiles a(dir.path());
    a.update(snapshot(1'000'000, 5, 100));
    a.update(snapshot(1'000'000, 10, 250));
  }
  {
    bundles::StatusFiles b(dir.path());
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
  // Two campaigns in plot_data: one polyline per campaign and series (1 + 4 series), one path of
  // steps for the unique findings across both, and a dashed line where the second campaign
  // starts in each plot.
  EXPECT_EQ(count(page, "<polyline"), 2u * 5u);
  EXPECT_EQ(count(page, "<path class=\"steps\""), 1u);
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

// The part of `page` that is the plot `id`.
std::string plot_svg(const std::string& page, const std::string& id) {
  const auto start = page.find("<svg class=\"plot\" id=\"" + id + "\"");
  if (start == std::string::npos) return "";
  return page.substr(start, page.find("</svg>", start) - start);
}

TEST(HtmlReport, EachLegendEntryHasItsSeriesColourWhichTheStyleSheetCannotOverride) {
  host::TempDir dir("aotfuzz-report-test");
  {
    bundles::StatusFiles a(dir.path());
    a.update(snapshot(1'000'000, 0, 0));
    a.update(snapshot(1'000'000, 5, 100));
  }
  write_bundle(dir.path() / "a", "arity:codegen:kernel", kGraphvizSvg);
  const std::string page = render_report(load_report_input(dir.path()));
  // `svg text { fill: #333 }` beats a fill attribute: the colour must be in a style attribute.
  ASSERT_NE(page.find("svg text { font-family: sans-serif; font-size: 12px; fill: #333; }"),
            std::string::npos);
  const std::regex legend_text(
      "<text [^>]*style=\"fill:(#[0-9a-f]{6})\" class=\"legend\" data-series=\"([0-9]+)\">");
  const std::regex swatch(
      "<line class=\"swatch\" [^>]*stroke=\"(#[0-9a-f]{6})\" "
      "data-series=\"([0-9]+)\"/>");
  const std::regex line(
      "<(?:polyline|path class=\"steps\") [^>]*stroke=\"(#[0-9a-f]{6})\" "
      "[^>]*data-series=\"([0-9]+)\"/>");
  std::size_t legends = 0;
  for (const std::string id : {"throughput", "findings", "features"}) {
    const std::string svg = plot_svg(page, id);
    std::map<std::string, std::string> stroke;
    for (std::sregex_iterator m(svg.begin(), svg.end(), line), end; m != end; ++m) {
      stroke[(*m)[2]] = (*m)[1];
    }
    std::map<std::string, std::string> swatches;
    for (std::sregex_iterator m(svg.begin(), svg.end(), swatch), end; m != end; ++m) {
      swatches[(*m)[2]] = (*m)[1];
    }
    std::set<std::string> colours;
    for (std::sregex_iterator m(svg.begin(), svg.end(), legend_text), end; m != end; ++m) {
      ++legends;
      const std::string series = (*m)[2], colour = (*m)[1];
      ASSERT_TRUE(stroke.count(series)) << id << " series " << series << "\n" << svg;
      EXPECT_EQ(colour, stroke[series]) << id << " series " << series;
      EXPECT_EQ(swatches[series], colour) << id << " series " << series;
      colours.insert(colour);
    }
    EXPECT_EQ(colours.size(), stroke.size()) << id << ": one colour per series";
  }
  EXPECT_EQ(legends, 1u + 1u + 4u);
}

TEST(HtmlReport, UniqueFindingsAreStepsCountedOnceAcrossTheCampaignsOfTheDirectory) {
  host::TempDir dir("aotfuzz-report-test");
  auto row = [](std::time_t start, double elapsed, std::size_t unique) {
    bundles::StatusSnapshot s =
        snapshot(start, elapsed, 100 + 10 * static_cast<std::uint64_t>(elapsed));
    s.progress.unique_signatures = unique;
    return s;
  };
  using Rows = std::vector<std::pair<double, std::size_t>>;
  // The first campaign finds A; the second sees A again and finds B, so its own count (what its
  // plot_data rows hold) restarts at 0 and reaches 2.
  {
    bundles::StatusFiles first(dir.path());
    for (const auto& [t, n] : Rows{{0, 0}, {5, 1}, {10, 1}}) first.update(row(1'000'000, t, n));
  }
  {
    bundles::StatusFiles second(dir.path());
    for (const auto& [t, n] : Rows{{0, 0}, {5, 2}, {10, 2}}) second.update(row(1'000'020, t, n));
  }
  write_bundle(dir.path() / "a", "arity:codegen:kernel", kGraphvizSvg);
  write_bundle(dir.path() / "b", "mismatch:codegen", kGraphvizSvg);
  bundles::record_seen(dir.path() / "a", 3, 1'000'005);
  bundles::record_seen(dir.path() / "a", 1, 1'000'025);
  bundles::record_seen(dir.path() / "b", 1, 1'000'025);
  const ReportInput input = load_report_input(dir.path());
  ASSERT_EQ(input.plot.size(), 6u);

  // The campaigns end to end: the first is 10 s long, so the second's 5 s are at 15 s. A signature
  // both campaigns saw counts once.
  const auto steps = unique_findings_steps(input);
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].x, 0);
  EXPECT_EQ(steps[0].count, 0u);
  EXPECT_EQ(steps[1].x, 5);
  EXPECT_EQ(steps[1].count, 1u);
  EXPECT_EQ(steps[2].x, 15);
  EXPECT_EQ(steps[2].count, 2u);

  // On the page: flat, then straight up at each finding (never a slope), never down, ending at
  // the top tick, 2.
  const std::string svg = plot_svg(render_report(input), "findings");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(svg, m, std::regex("<path class=\"steps\" [^>]*d=\"([^\"]*)\"")))
      << svg;
  const std::string d = m[1];
  const std::string num = "([0-9]+(?:\\.[0-9]+)?)";
  const std::regex shape("M" + num + "," + num + " H" + num + " V" + num + " H" + num + " V" + num +
                         " H" + num);
  ASSERT_TRUE(std::regex_match(d, m, shape)) << d;
  const double y0 = std::stod(m[2]), y1 = std::stod(m[4]), y2 = std::stod(m[6]);
  EXPECT_LT(std::stod(m[1]), std::stod(m[3]));
  EXPECT_LT(std::stod(m[3]), std::stod(m[5]));
  EXPECT_LT(std::stod(m[5]), std::stod(m[7]));
  EXPECT_GT(y0, y1);
  EXPECT_GT(y1, y2);
  auto tick_y = [&](const std::string& label) {
    std::smatch t;
    const std::string after = "\" text-anchor=\"end\" dominant-baseline=\"middle\">";
    const std::regex r("<text x=\"58\" y=\"" + num + after + label + "</text>");
    return std::regex_search(svg, t, r) ? std::stod(t[1]) : -1.0;
  };
  EXPECT_EQ(y0, tick_y("0"));
  EXPECT_EQ(y2, tick_y("2"));
}

TEST(HtmlReport, AFindingFirstSeenOutsideEveryCampaignCountsFromTheCampaignBefore) {
  ReportInput in;
  auto row = [](std::time_t start, double relative) {
    bundles::PlotRow r;
    r.unix_time = start + static_cast<std::time_t>(relative);
    r.relative_time = relative;
    return r;
  };
  in.plot = {row(1'000, 0), row(1'000, 10), row(2'000, 0), row(2'000, 20)};
  auto bundle = [&](std::time_t first_seen) {
    ReportBundle b;
    b.summary.seen.first_seen = b.summary.seen.last_seen = first_seen;
    in.bundles.push_back(b);
  };
  bundle(500);    // before plot_data begins (its rows were removed): there from the start
  bundle(1'500);  // between the campaigns: at the end of the first
  bundle(2'012);  // 12 s into the second
  bundle(9'000);  // after the last: at its end
  bundle(2'012);
  const auto steps = unique_findings_steps(in);
  ASSERT_EQ(steps.size(), 4u);
  EXPECT_EQ(steps[0].x, 0);
  EXPECT_EQ(steps[0].count, 1u);
  EXPECT_EQ(steps[1].x, 10);
  EXPECT_EQ(steps[1].count, 2u);
  EXPECT_EQ(steps[2].x, 22);
  EXPECT_EQ(steps[2].count, 4u);
  EXPECT_EQ(steps[3].x, 30);
  EXPECT_EQ(steps[3].count, 5u);
  in.plot.clear();
  EXPECT_TRUE(unique_findings_steps(in).empty());
}

TEST(HtmlReport, APictureThatCouldRunCodeIsLeftOut) {
  host::TempDir dir("aotfuzz-report-test");
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
  host::TempDir dir("aotfuzz-report-test");
  const std::string page = render_report(load_report_input(dir.path()));
  EXPECT_NE(page.find("No plot_data"), std::string::npos);
  EXPECT_NE(page.find("No bundles"), std::string::npos);
  EXPECT_NE(page.find("0 campaigns, 0 cases"), std::string::npos);
}

TEST(HtmlReport, AMissingDirectoryIsAnError) {
  EXPECT_THROW(load_report_input("/nonexistent/aotfuzz-report"), std::system_error);
}

}  // namespace
}  // namespace aotfuzz::report

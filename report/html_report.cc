#include "report/html_report.h"
#include "report/report_css.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <system_error>
#include <utility>

#include "bundles/bundle.h"
#include "oracle/verdict.h"

namespace aotfuzz::report {

namespace fs = std::filesystem;
using nlohmann::json;

std::string html_escape(const std::string& text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

namespace {

// Graphviz writes an XML prolog and a doctype before the <svg> element; inline SVG in HTML is
// the element alone. A picture that carries markup able to run code is left out.
std::string inline_svg(const std::string& file_text) {
  const auto start = file_text.find("<svg");
  if (start == std::string::npos) return "";
  std::string svg = file_text.substr(start);
  std::string lower = svg;
  std::transform(lower.begin(), lower.end(), lower.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  for (const char* risky : {"<script", "<foreignobject", "javascript:"}) {
    if (lower.find(risky) != std::string::npos) return "";
  }
  // Event-handler attributes: onload=, onclick=, ...
  for (auto p = lower.find(" on"); p != std::string::npos; p = lower.find(" on", p + 1)) {
    auto q = p + 3;
    while (q < lower.size() && std::isalpha(static_cast<unsigned char>(lower[q]))) ++q;
    if (q > p + 3 && q < lower.size() && lower[q] == '=') return "";
  }
  return svg;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

// A value for an axis label: whole numbers plain, others with one or two decimals.
std::string tick(double v) {
  if (v >= 100 || v == static_cast<double>(static_cast<long long>(v))) return fixed(v, 0);
  return fixed(v, v >= 10 ? 1 : 2);
}

std::uint64_t u64(const json& j, const char* key) {
  const auto it = j.find(key);
  return it != j.end() && it->is_number_unsigned() ? it->get<std::uint64_t>() : 0;
}

struct Series {
  std::string name;
  std::string colour;
  double bundles::PlotRow::*real = nullptr;
  std::uint64_t bundles::PlotRow::*count = nullptr;
  double value(const bundles::PlotRow& r) const {
    return real ? r.*real : static_cast<double>(r.*count);
  }
};

// The rows of plot_data by campaign: a campaign's rows share a start (unix time less relative
// time, to a second or two), and its relative time only grows.
std::vector<std::vector<bundles::PlotRow>> by_campaign(const std::vector<bundles::PlotRow>& rows) {
  std::vector<std::vector<bundles::PlotRow>> out;
  double start = 0;
  for (const auto& r : rows) {
    const double s = static_cast<double>(r.unix_time) - r.relative_time;
    if (out.empty() || r.relative_time < out.back().back().relative_time || s > start + 2) {
      out.emplace_back();
      start = s;
    }
    out.back().push_back(r);
  }
  return out;
}

// The time axis of the plots: the campaigns laid end to end, each at least a second long.
struct Timeline {
  std::vector<double> offsets;  // where each campaign starts on the axis
  std::vector<double> starts;   // and in unix time
  std::vector<double> spans;
  double length = 0;
};

Timeline timeline(const std::vector<std::vector<bundles::PlotRow>>& campaigns) {
  Timeline t;
  for (const auto& c : campaigns) {
    t.offsets.push_back(t.length);
    t.starts.push_back(static_cast<double>(c.front().unix_time) - c.front().relative_time);
    t.spans.push_back(std::max(1.0, c.back().relative_time));
    t.length += t.spans.back();
  }
  return t;
}

// A count that only grows, drawn over the whole axis as one path of steps.
struct StepSeries {
  std::string name;
  std::string colour;
  std::vector<FindingStep> steps;
};

// The legend, in rows across the top of the plot: a swatch and the name in the series' colour.
// The colour goes in a style attribute: a fill attribute loses to any style sheet rule, and
// `svg text` sets #333 for the axes' labels. A white halo (text.legend in the style sheet) keeps
// a name readable where a line crosses it.
std::string legend(const std::vector<std::pair<std::string, std::string>>& entries, double left,
                   double right, double top) {
  std::string out;
  double lx = left, ly = top;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const auto& [name, colour] = entries[i];
    const double w = 18 + 7.5 * static_cast<double>(name.size());
    if (lx > left && lx + w > right) {
      lx = left;
      ly += 16;
    }
    const std::string series = "\" data-series=\"" + std::to_string(i) + "\"";
    out += "<line class=\"swatch\" x1=\"" + fixed(lx, 0) + "\" x2=\"" + fixed(lx + 14, 0) +
           "\" y1=\"" + fixed(ly - 4, 0) + "\" y2=\"" + fixed(ly - 4, 0) +
           "\" stroke-width=\"3\" stroke=\"" + colour + series + "/>\n";
    out += "<text x=\"" + fixed(lx + 18, 0) + "\" y=\"" + fixed(ly, 0) +
           "\" style=\"fill:" + colour + "\" class=\"legend" + series + ">" + html_escape(name) +
           "</text>\n";
    lx += w + 10;
  }
  return out;
}

// A line plot over the campaigns laid end to end (dashed lines where one ends), one polyline per
// series and campaign, and the step series, if any, as one path across them.
std::string line_plot(const std::string& id, const std::string& title,
                      const std::vector<std::vector<bundles::PlotRow>>& campaigns,
                      const std::vector<Series>& series, const StepSeries* steps = nullptr) {
  constexpr double kW = 640, kH = 220, kLeft = 64, kRight = 16, kTop = 28, kBottom = 36;
  const double pw = kW - kLeft - kRight, ph = kH - kTop - kBottom;
  const Timeline tl = timeline(campaigns);
  double y_max = 0;
  for (const auto& c : campaigns) {
    for (const auto& r : c) {
      for (const auto& s : series) y_max = std::max(y_max, s.value(r));
    }
  }
  if (steps && !steps->steps.empty()) {
    y_max = std::max(y_max, static_cast<double>(steps->steps.back().count));
  }
  const double x_max = tl.length > 0 ? tl.length : 1;
  // The top tick is the largest value itself: y_max * 1.05 / 1.05 need not give it back exactly.
  const double y_top = y_max;
  y_max = y_max > 0 ? y_max * 1.05 : 1;
  auto sx = [&](double x) { return fixed(kLeft + pw * x / x_max, 1); };
  auto sy = [&](double y) { return fixed(kTop + ph * (1 - y / y_max), 1); };

  std::string out = "<svg class=\"plot\" id=\"" + id + "\" xmlns=\"http://www.w3.org/2000/svg\" " +
                    "width=\"" + fixed(kW, 0) + "\" height=\"" + fixed(kH, 0) +
                    "\" viewBox=\"0 0 " + fixed(kW, 0) + " " + fixed(kH, 0) + "\">\n";
  out += "<text x=\"" + fixed(kLeft, 0) + "\" y=\"16\" class=\"title\">" + html_escape(title) +
         "</text>\n";
  // Axes, ticks at 0, half and the top, and the time axis.
  out += "<rect x=\"" + fixed(kLeft, 0) + "\" y=\"" + fixed(kTop, 0) + "\" width=\"" +
         fixed(pw, 0) + "\" height=\"" + fixed(ph, 0) + "\" fill=\"none\" stroke=\"#999\"/>\n";
  for (double f : {0.0, 0.5, 1.0}) {
    const double v = y_top > 0 ? y_top * f : f;
    out += "<text x=\"" + fixed(kLeft - 6, 0) + "\" y=\"" + sy(v) +
           "\" text-anchor=\"end\" dominant-baseline=\"middle\">" + tick(v) + "</text>\n";
    out += "<line x1=\"" + fixed(kLeft, 0) + "\" x2=\"" + fixed(kLeft + pw, 0) + "\" y1=\"" +
           sy(v) + "\" y2=\"" + sy(v) + "\" stroke=\"#eee\"/>\n";
  }
  out += "<text x=\"" + fixed(kLeft, 0) + "\" y=\"" + fixed(kH - 8, 0) + "\">0</text>\n";
  out += "<text x=\"" + fixed(kLeft + pw, 0) + "\" y=\"" + fixed(kH - 8, 0) +
         "\" text-anchor=\"end\">" + tick(x_max) + " s</text>\n";
  out += "<text x=\"" + fixed(kLeft + pw / 2, 0) + "\" y=\"" + fixed(kH - 8, 0) +
         "\" text-anchor=\"middle\">campaign time, campaigns end to end</text>\n";
  for (std::size_t c = 1; c < tl.offsets.size(); ++c) {
    out += "<line class=\"campaign-start\" x1=\"" + sx(tl.offsets[c]) + "\" x2=\"" +
           sx(tl.offsets[c]) + "\" y1=\"" + fixed(kTop, 0) + "\" y2=\"" + fixed(kTop + ph, 0) +
           "\" stroke=\"#888\" stroke-dasharray=\"4 3\"/>\n";
  }
  std::vector<std::pair<std::string, std::string>> entries;
  for (std::size_t i = 0; i < series.size(); ++i) {
    const Series& s = series[i];
    const std::string attrs = "\" data-series=\"" + std::to_string(i) + "\"";
    for (std::size_t c = 0; c < campaigns.size(); ++c) {
      std::string points;
      for (const auto& r : campaigns[c]) {
        points += sx(tl.offsets[c] + r.relative_time) + "," + sy(s.value(r)) + " ";
      }
      // A campaign of one row still shows, as a dot.
      if (campaigns[c].size() == 1) {
        out += "<circle cx=\"" + sx(tl.offsets[c] + campaigns[c][0].relative_time) + "\" cy=\"" +
               sy(s.value(campaigns[c][0])) + "\" r=\"3\" fill=\"" + s.colour + attrs + "/>\n";
      }
      out += "<polyline fill=\"none\" stroke-width=\"2.5\" stroke=\"" + s.colour + "\" points=\"" +
             points + attrs + "/>\n";
    }
    entries.emplace_back(s.name, s.colour);
  }
  if (steps && !steps->steps.empty()) {
    // Flat until the moment of the next finding, then straight up: a finding is an event, and a
    // line between two 5-s samples would spread it over the time between them.
    std::string d = "M" + sx(steps->steps.front().x) + "," + sy(steps->steps.front().count);
    for (std::size_t i = 1; i < steps->steps.size(); ++i) {
      d += " H" + sx(steps->steps[i].x) + " V" + sy(steps->steps[i].count);
    }
    d += " H" + sx(x_max);
    out += "<path class=\"steps\" fill=\"none\" stroke-width=\"2.5\" stroke=\"" + steps->colour +
           "\" d=\"" + d + "\" data-series=\"" + std::to_string(series.size()) + "\"/>\n";
    entries.emplace_back(steps->name, steps->colour);
  }
  out += legend(entries, kLeft + 8, kLeft + pw - 8, kTop + 14);
  out += "</svg>\n";
  return out;
}

// Horizontal bars: label, count, and the share of `total` it is.
std::string bar_chart(const std::string& id,
                      const std::vector<std::pair<std::string, std::uint64_t>>& rows,
                      std::uint64_t total) {
  constexpr double kW = 640, kRow = 22, kLabel = 300, kBar = 220;
  const double h = kRow * static_cast<double>(rows.size()) + 8;
  std::string out = "<svg class=\"bars\" id=\"" + id + "\" xmlns=\"http://www.w3.org/2000/svg\" " +
                    "width=\"" + fixed(kW, 0) + "\" height=\"" + fixed(h, 0) + "\" viewBox=\"0 0 " +
                    fixed(kW, 0) + " " + fixed(h, 0) + "\">\n";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const auto& [label, n] = rows[i];
    const double share = total > 0 ? static_cast<double>(n) / static_cast<double>(total) : 0;
    const double y = 4 + kRow * static_cast<double>(i);
    out += "<text x=\"0\" y=\"" + fixed(y + 15, 0) + "\">" + html_escape(label) + "</text>\n";
    out += "<rect x=\"" + fixed(kLabel, 0) + "\" y=\"" + fixed(y + 3, 0) + "\" width=\"" +
           fixed(kBar, 0) + "\" height=\"16\" fill=\"#f2f2f2\"/>\n";
    out += "<rect x=\"" + fixed(kLabel, 0) + "\" y=\"" + fixed(y + 3, 0) + "\" width=\"" +
           fixed(kBar * share, 1) + "\" height=\"16\" fill=\"#17becf\"/>\n";
    out += "<text x=\"" + fixed(kLabel + kBar + 8, 0) + "\" y=\"" + fixed(y + 15, 0) + "\">" +
           std::to_string(n) + " (" + fixed(100 * share, 1) + "%)</text>\n";
  }
  out += "</svg>\n";
  return out;
}

std::string campaigns_table(const std::vector<json>& records) {
  // Records a merge brought in name their source (bundles/merge_findings.h): a column of its own.
  const bool merged = std::any_of(records.begin(), records.end(),
                                  [](const json& r) { return r.contains("source"); });
  std::string out = "<table id=\"campaigns\"><tr>";
  if (merged) out += "<th>source</th>";
  out +=
      "<th>started (UTC)</th><th>seed</th><th>jobs</th>"
      "<th>time</th><th>cases</th><th>cases/s</th><th>finding cases</th>"
      "<th>unique signatures</th></tr>\n";
  for (const auto& r : records) {
    out += "<tr>";
    if (merged) {
      const auto source = r.value("source", json());
      out += "<td>" + html_escape(source.is_string() ? source.get<std::string>() : "") + "</td>";
    }
    out += "<td>" + bundles::utc(r.value("start_time", std::time_t{0})) + "</td><td>" +
           std::to_string(u64(r, "seed")) + "</td><td>" + std::to_string(r.value("jobs", 0)) +
           "</td><td>" + fixed(r.value("elapsed_s", 0.0), 1) + " s</td><td>" +
           std::to_string(u64(r, "cases")) + "</td><td>" + fixed(r.value("cases_per_s", 0.0), 1) +
           "</td><td>" + std::to_string(u64(r, "finding_cases")) + "</td><td>" +
           std::to_string(u64(r, "unique_signatures")) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// Verdicts by kind (rows) and the pipeline stage they were attributed to (columns), summed over
// the campaigns.
std::string verdicts_table(const std::vector<json>& records) {
  std::map<std::string, std::map<std::string, std::uint64_t>> counts;
  for (const auto& r : records) {
    if (!r.contains("verdicts") || !r["verdicts"].is_object()) continue;
    for (const auto& [kind, v] : r["verdicts"].items()) {
      if (!v.is_object() || !v.contains("stages") || !v["stages"].is_object()) continue;
      for (const auto& [stage, n] : v["stages"].items()) {
        if (n.is_number_unsigned()) counts[kind][stage] += n.get<std::uint64_t>();
      }
    }
  }
  std::string out = "<table id=\"verdicts\"><tr><th>verdict</th>";
  for (int st = 0; st < oracle::kNumStages; ++st) {
    out += "<th>" + std::string(oracle::stage_name(static_cast<oracle::Stage>(st))) + "</th>";
  }
  out += "<th>total</th></tr>\n";
  for (int k = 0; k < oracle::kNumVerdictKinds; ++k) {
    const std::string kind(oracle::verdict_kind_name(static_cast<oracle::VerdictKind>(k)));
    const auto it = counts.find(kind);
    if (it == counts.end()) continue;
    std::uint64_t total = 0;
    out += "<tr><td>" + html_escape(kind) + "</td>";
    for (int st = 0; st < oracle::kNumStages; ++st) {
      const std::string stage(oracle::stage_name(static_cast<oracle::Stage>(st)));
      const auto n = it->second.count(stage) ? it->second.at(stage) : 0;
      total += n;
      out += n ? "<td class=\"n\">" + std::to_string(n) + "</td>" : "<td class=\"zero\">0</td>";
    }
    out += "<td class=\"n\">" + std::to_string(total) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

std::string coverage_section(const std::vector<json>& records) {
  std::uint64_t cases = 0;
  std::map<std::string, std::uint64_t> f, o;
  for (const auto& r : records) {
    cases += u64(r, "cases");
    for (const char* part : {"features", "options"}) {
      if (!r.contains(part) || !r[part].is_object()) continue;
      auto& into = std::string(part) == "features" ? f : o;
      for (const auto& [k, v] : r[part].items()) {
        if (v.is_number_unsigned()) into[k] += v.get<std::uint64_t>();
      }
    }
  }
  const std::vector<std::pair<std::string, std::uint64_t>> shares = {
      {"a multi-output region", f["cases_with_multi_output_region"]},
      {"a fused tuple parameter (#9036's shape)", f["cases_with_fused_tuple_param"]},
      {"an output of main repeated", f["cases_with_duplicate_outputs"]},
      {"MergeCompilerRegions run", o["merge"]},
      {"storage reuse on", o["storage_reuse"]},
      {"api unpacked (else packed)", o["api_unpacked"]},
      {"interface c (else packed)", o["interface_c"]},
      {"TVM's memory planner (USMP)", o["usmp"]},
      {"external memory pools", o["pools_external"]},
  };
  std::string out = "<p>Share of the " + std::to_string(cases) + " cases with:</p>\n";
  out += bar_chart("coverage", shares, cases);
  const double n = std::max<double>(1, static_cast<double>(cases));
  out += "<table id=\"per-case\"><tr><th>per case (mean)</th><th></th></tr>\n";
  for (const auto& [label, key] : std::vector<std::pair<std::string, std::string>>{
           {"operators", "ops"},
           {"inputs", "inputs"},
           {"outputs", "outputs"},
           {"regions", "regions"},
           {"multi-output regions", "multi_output_regions"},
           {"tuples", "tuples"},
           {"tuple projections", "tuple_get_items"},
           {"host operators between regions", "host_ops_between_regions"},
           {"regions ending on a tuple", "ends_on_tuples"},
           {"tuple parameters of fused functions", "fused_tuple_params"},
           {"tuple parameters of main", "main_tuple_params"}}) {
    out += "<tr><td>" + label + "</td><td class=\"n\">" +
           fixed(static_cast<double>(f[key]) / n, 2) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// A bundle's row of the triage across TVM builds (bundles/triage.h), when it has one.
std::string triage_line(const nlohmann::json& triage) {
  if (!triage.is_object() || !triage.contains("builds")) return "";
  std::string out = "<div class=\"triage\">across builds:";
  for (const auto& cell : triage.at("builds")) {
    const std::string outcome = cell.value("outcome", "");
    out += " <span class=\"" + html_escape(outcome) + "\">" + html_escape(cell.value("build", "")) +
           " " + html_escape(outcome) + "</span>";
  }
  const auto first = triage.value("first_reproducing", nlohmann::json());
  const auto last = triage.value("last_reproducing", nlohmann::json());
  if (first.is_string()) {
    out +=
        " (reproduces on " + html_escape(first.get<std::string>()) +
        (last.is_string() && last != first ? " .. " + html_escape(last.get<std::string>()) : "") +
        ")";
  }
  return out + "</div>";
}

// A bundle's bisection over TVM's history (bundles/bisect.h), when it has one: the commit, or the
// commits skipped builds leave it between.
std::string bisect_line(const nlohmann::json& bisect) {
  if (!bisect.is_object() || !bisect.contains("kind")) return "";
  const std::string kind = bisect.value("kind", "");
  std::string out = "<div class=\"bisect\">" + html_escape(kind) + " by ";
  if (bisect.value("answered", false)) {
    out += "<code>" + html_escape(bisect.value("commit", "").substr(0, 12)) + "</code> " +
           html_escape(bisect.value("subject", ""));
    if (bisect.contains("pr") && bisect.at("pr").is_number()) {
      out += " (PR #" + std::to_string(bisect.at("pr").get<int>()) + ")";
    }
    return out + "</div>";
  }
  const auto ends = bisect.value("unconfirmed_ends", nlohmann::json::array());
  if (!ends.empty()) {
    out = "<div class=\"bisect\">" + html_escape(kind) + ": no answer, ";
    out += bisect.value("ends_contradicted", false) ? "the ends are wrong or swapped:"
                                                    : "an end could not be judged:";
    for (const auto& c : ends) {
      out += " <code>" + html_escape(c.value("commit", "").substr(0, 12)) + "</code> " +
             html_escape(c.value("outcome", ""));
    }
    return out + "</div>";
  }
  const auto& could_be = bisect.value("could_be", nlohmann::json::array());
  out += "one of " + std::to_string(could_be.size()) + " commits (builds skipped):";
  for (const auto& c : could_be) {
    out += " <code>" + html_escape(c.value("commit", "").substr(0, 12)) + "</code>";
  }
  return out + "</div>";
}

std::string bundles_table(const std::vector<ReportBundle>& bundles) {
  std::string out =
      "<table id=\"bundles\"><tr><th>reduced graph</th><th>finding</th><th>first seen</th>"
      "<th>last seen</th><th>hits</th><th>campaigns</th><th>ops</th></tr>\n";
  for (std::size_t i = 0; i < bundles.size(); ++i) {
    const bundles::BundleSummary& b = bundles[i].summary;
    out += "<tr class=\"bundle\" id=\"bundle-" + std::to_string(i) + "\"><td class=\"picture\">";
    out += bundles[i].svg.empty() ? "<span class=\"none\">no picture</span>" : bundles[i].svg;
    out += "</td><td><div class=\"signature\">" + html_escape(b.signature) + "</div>";
    out += "<div>" + html_escape(b.verdict_summary) + "</div>";
    out += "<div class=\"dir\">" + html_escape(b.dir.filename().string()) +
           (b.reduction_complete ? "" : " (reduction not finished)") + "</div>";
    out += "<pre class=\"replay\">" + html_escape(b.replay) + "</pre>";
    out += triage_line(b.triage) + bisect_line(b.bisect) + "</td>";
    out += "<td>" + bundles::utc(b.seen.first_seen) + "</td><td>" + bundles::utc(b.seen.last_seen) +
           "</td><td class=\"n\">" + std::to_string(b.seen.hits) + "</td><td class=\"n\">" +
           std::to_string(b.seen.campaigns) + "</td><td class=\"n\">" +
           (b.reduced_ops < 0 ? "-" : std::to_string(b.reduced_ops)) + "</td></tr>\n";
  }
  return out + "</table>\n";
}
}  // namespace

std::vector<FindingStep> unique_findings_steps(const ReportInput& in) {
  const auto campaigns = by_campaign(in.plot);
  if (campaigns.empty()) return {};
  const Timeline tl = timeline(campaigns);
  std::vector<double> xs;
  for (const auto& b : in.bundles) {
    const auto t = static_cast<double>(b.summary.seen.first_seen);
    // first_seen is written at a status update, as the rows are, so it falls in the campaign
    // that saw the signature first; one from outside any (a bundle copied in) counts from the
    // end of the campaign before it.
    double x = 0;
    for (std::size_t c = tl.starts.size(); c-- > 0;) {
      if (tl.starts[c] <= t) {
        x = tl.offsets[c] + std::min(t - tl.starts[c], tl.spans[c]);
        break;
      }
    }
    xs.push_back(x);
  }
  std::sort(xs.begin(), xs.end());
  std::vector<FindingStep> steps{{0, 0}};
  for (const double x : xs) {
    if (x > steps.back().x) steps.push_back({x, steps.back().count});
    ++steps.back().count;
  }
  return steps;
}

ReportInput load_report_input(const fs::path& dir) {
  ReportInput in;
  in.dir = dir;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    throw std::system_error(ec ? ec : std::make_error_code(std::errc::not_a_directory),
                            "cannot read " + dir.string());
  }
  in.plot = bundles::read_all_plot_data(dir);
  // A merged directory (bundles/merge_findings.h) keeps each source's plot_data under
  // sources/<name>/: their campaigns follow the directory's own, in name order.
  std::vector<fs::path> sources;
  for (auto it = fs::directory_iterator(dir / "sources", ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    if (fs::exists(it->path() / "plot_data")) sources.push_back(it->path() / "plot_data");
  }
  std::sort(sources.begin(), sources.end());
  for (const auto& p : sources) {
    for (const auto& row : bundles::parse_plot_data(bundles::read_text_file(p)))
      in.plot.push_back(row);
  }
  ec.clear();
  in.campaigns = bundles::read_campaign_records(dir);
  for (auto& b : bundles::list_bundles(dir)) {
    ReportBundle rb;
    if (fs::exists(b.dir / "reduced.svg", ec))
      rb.svg = inline_svg(bundles::read_text_file(b.dir / "reduced.svg"));
    rb.summary = std::move(b);
    in.bundles.push_back(std::move(rb));
  }
  in.generated = std::time(nullptr);
  return in;
}

std::string render_report(const ReportInput& in) {
  std::uint64_t cases = 0;
  double seconds = 0;
  for (const auto& r : in.campaigns) {
    cases += u64(r, "cases");
    seconds += r.value("elapsed_s", 0.0);
  }
  const auto campaigns = by_campaign(in.plot);
  std::string out = "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n";
  out += "<title>aotfuzz report: " + html_escape(in.dir.string()) + "</title>\n";
  out += "<style>";
  out += kReportStyle;
  out += "</style></head><body>\n";
  out += "<h1>aotfuzz report: " + html_escape(in.dir.string()) + "</h1>\n";
  auto count = [](std::size_t n, const char* what) {
    return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
  };
  out += "<p id=\"summary\">" + count(in.campaigns.size(), "campaign") + ", " +
         count(cases, "case") + " in " + fixed(seconds, 1) + " s, " +
         count(in.bundles.size(), "bundle") + ". Made " + bundles::utc(in.generated) + ".</p>\n";

  out += "<h2>Over time</h2>\n";
  if (campaigns.empty()) {
    out += "<p class=\"none\">No plot_data: no campaign has written into this directory.</p>\n";
  } else {
    out += "<div class=\"plots\">\n";
    out += line_plot("throughput", "Throughput (cases/s)", campaigns,
                     {{"cases/s", "#d62728", &bundles::PlotRow::cases_per_sec, nullptr}});
    const StepSeries findings{"unique signatures", "#1f77b4", unique_findings_steps(in)};
    out += line_plot("findings", "Unique findings (signatures), all campaigns", campaigns, {},
                     &findings);
    out += line_plot(
        "features", "Cases with a feature or verdict", campaigns,
        {{"finding", "#ff7f0e", nullptr, &bundles::PlotRow::finding_cases},
         {"multi-output region", "#2ca02c", nullptr, &bundles::PlotRow::multi_output_cases},
         {"fused tuple parameter", "#9467bd", nullptr, &bundles::PlotRow::fused_tuple_param_cases},
         {"structure verdicts", "#8c564b", nullptr, &bundles::PlotRow::structure_cases}});
    out += "</div>\n";
  }
  out += "<h2>Campaigns</h2>\n" + campaigns_table(in.campaigns);
  out += "<h2>Verdicts by kind and stage</h2>\n" + verdicts_table(in.campaigns);
  out += "<h2>Generator feature coverage</h2>\n" + coverage_section(in.campaigns);
  out += "<h2>Bundles</h2>\n";
  if (in.bundles.empty()) {
    out += "<p class=\"none\">No bundles: nothing was found.</p>\n";
  } else {
    out += bundles_table(in.bundles);
  }
  out += "</body></html>\n";
  return out;
}

void write_report_page(const fs::path& dir) {
  bundles::write_file_atomically(dir / "report.html", render_report(load_report_input(dir)));
}

}  // namespace aotfuzz::report

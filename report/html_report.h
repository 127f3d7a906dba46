// `aotfuzz report DIR`: one self-contained static HTML page for a findings directory, across all
// the campaigns that wrote into it. Read from what campaigns leave there (status_files.h):
// `plot_data` for the plots over time (and, in a directory `aotfuzz merge` made, each source's
// under `sources/`), `campaigns/*.json` for verdicts by kind and stage and the
// generator's feature coverage, and the bundles (findings_list.h) with their reduced graphs'
// pictures and first sightings (the unique findings over time). The page has no script and loads
// nothing: plots and bars are inline SVG, and each bundle's picture is its reduced.svg inlined.
#pragma once

#include <cstddef>
#include <ctime>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "bundles/findings_list.h"
#include "bundles/status_files.h"

namespace aotfuzz::report {

struct ReportBundle {
  bundles::BundleSummary summary;
  /// The reduced graph's picture (reduced.svg from its `<svg` on), empty when the bundle has
  /// none (graphviz was not installed) or it holds a script.
  std::string svg;
};

/// Everything the page shows.
struct ReportInput {
  std::filesystem::path dir;
  std::vector<bundles::PlotRow> plot;
  std::vector<nlohmann::json> campaigns;
  std::vector<ReportBundle> bundles;
  /// When the page was made (unix time), printed in its header.
  std::time_t generated = 0;
};

/// Reads `dir`. Throws std::system_error when `dir` cannot be read; missing parts (no plot_data,
/// no campaign records, no bundles) leave theirs empty.
ReportInput load_report_input(const std::filesystem::path& dir);

/// A level of the unique findings plot: from `x` seconds on (the axis of the plots, which lay the
/// campaigns of plot_data end to end), `count` distinct signatures had been seen in the directory.
struct FindingStep {
  double x = 0;
  std::size_t count = 0;
};
/// The directory's unique findings over time, cumulative across its campaigns: one level at 0,
/// then one per moment a bundle was first seen (seen.json's first_seen placed in the campaign
/// that ran then, clamped to it; before the first campaign it counts from 0). Bundles, not
/// plot_data's per-campaign counts: those restart with each campaign and count again the
/// signatures an earlier one already bundled. Empty without plot_data.
std::vector<FindingStep> unique_findings_steps(const ReportInput& input);

/// The page. Deterministic for a given input.
std::string render_report(const ReportInput& input);

/// `text` with &, <, >, " and ' escaped for HTML text and attribute values.
std::string html_escape(const std::string& text);

/// Writes DIR/report.html (replaced atomically) from load_report_input(DIR).
void write_report_page(const std::filesystem::path& dir);

}  // namespace aotfuzz::report

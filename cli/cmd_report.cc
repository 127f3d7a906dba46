// `aotfuzz report DIR [--out FILE]`: one self-contained HTML page for a findings directory.
#include <iostream>

#include "cli/common.h"
#include "bundles/status_files.h"
#include "report/html_report.h"

namespace aotfuzz::cli {

Command register_report(CLI::App& parent) {
  struct Opts {
    std::string dir;
    std::string out;
  };
  auto opts = std::make_shared<Opts>();
  Command c;
  c.app = parent.add_subcommand(
      "report",
      "Write one self-contained HTML page for a findings directory, across the "
      "campaigns that wrote into it: throughput and findings over time, verdicts by "
      "kind and stage, generator feature coverage, and every bundle with its reduced "
      "graph's picture and replay command");
  c.app->add_option("DIR", opts->dir, "Findings directory")
      ->required()
      ->check(CLI::ExistingDirectory);
  c.app->add_option("--out", opts->out, "The page to write (default: DIR/report.html)");
  c.run = [opts] {
    require_findings_dir(opts->dir, "report");
    const std::string out = opts->out.empty() ? opts->dir + "/report.html" : opts->out;
    check_output_file(out, "--out", "report");
    report::ReportInput input;
    try {
      input = report::load_report_input(opts->dir);
    } catch (const std::system_error& e) {
      throw CommandError(kBadInput, std::string("report: ") + e.what());
    }
    try {
      bundles::write_file_atomically(out, report::render_report(input));
    } catch (const std::system_error& e) {
      throw CommandError(kInternal, std::string("report: ") + e.what());
    }
    auto count = [](std::size_t n, const char* what) {
      return std::to_string(n) + " " + what + (n == 1 ? "" : "s");
    };
    std::cout << "report: " << out << " (" << count(input.campaigns.size(), "campaign") << ", "
              << count(input.bundles.size(), "bundle") << ")\n";
    return static_cast<int>(kOk);
  };
  return c;
}

}  // namespace aotfuzz::cli

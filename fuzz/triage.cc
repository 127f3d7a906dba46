// Triage across TVM builds: a bundle's first finding line, replayed on each build.
#include "fuzz/triage.h"

#include <algorithm>
#include <cstdio>
#include <sstream>
#include <stdexcept>

#include "fuzz/bundle.h"
#include "fuzz/reduce_file.h"
#include "fuzz/replay.h"
#include "fuzz/status_files.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/oracle.h"
#include "oracle/tvm_driver.h"

namespace aotfuzz::fuzz {

TriageBuild parse_triage_build(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument("'" + text + "' is not LABEL=DIR");
  }
  return {text.substr(0, eq), text.substr(eq + 1)};
}

std::vector<TriageBuild> parse_triage_builds_file(const std::string& text,
                                                  const std::string& file) {
  std::vector<TriageBuild> out;
  std::istringstream in(text);
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::size_t hash = line.find('#');
    if (hash != std::string::npos) line.resize(hash);
    std::istringstream words(line);
    std::string label, home, extra;
    if (!(words >> label)) continue;
    if (!(words >> home) || (words >> extra)) {
      throw std::invalid_argument(file + ":" + std::to_string(n) +
                                  ": a build is one line `LABEL DIR`");
    }
    for (const auto& b : out) {
      if (b.label == label) {
        throw std::invalid_argument(file + ":" + std::to_string(n) + ": label '" + label +
                                    "' given twice");
      }
    }
    out.push_back({label, home});
  }
  if (out.empty()) throw std::invalid_argument(file + ": names no build");
  return out;
}

std::string_view triage_outcome_name(TriageOutcome outcome) {
  switch (outcome) {
    case TriageOutcome::kReproduces:
      return "reproduces";
    case TriageOutcome::kPasses:
      return "passes";
    case TriageOutcome::kOther:
      return "other";
    case TriageOutcome::kCannotRun:
      break;
  }
  return "cannot-run";
}

Triage::Triage(std::vector<TriageBuild> builds) : builds_(std::move(builds)) {
  for (const auto& b : builds_) {
    oracle::TvmDriverOptions o;
    o.home = b.home.string();
    drivers_.push_back(std::make_shared<oracle::TvmDriver>(o));
  }
}

Triage::~Triage() = default;

std::optional<TriageRow> Triage::row(const BundleSummary& bundle) {
  const std::string path = (bundle.dir / "reduced.relay").string();
  std::optional<ReplayLine> line;
  ir::Module module;
  try {
    const std::string text = read_text_file(bundle.dir / "reduced.relay");
    line = first_finding_line(parse_replay_lines(text, path));
    if (!line) return std::nullopt;
    module = ir::parse_module(text, path);
    ir::verify(module);
  } catch (const std::exception&) {
    return std::nullopt;
  }
  oracle::CaseOptions options = parse_case_flags(line->flags);
  if (options.sut.kind != oracle::SutKind::kTvm) return std::nullopt;
  TriageRow row;
  for (std::size_t i = 0; i < builds_.size(); ++i) {
    oracle::CaseOptions o = options;
    o.sut.tvm_home = builds_[i].home.string();
    o.sut.driver = drivers_[i];
    o.sut.tvm_home_fixed.clear();
    o.sut.fixed_driver.reset();
    const oracle::Verdict v = oracle::run_case(module, o).verdict;
    TriageCell cell;
    cell.build = builds_[i].label;
    cell.signature = oracle::signature(v);
    if (signature_matches(bundle.signature, cell.signature)) {
      cell.outcome = TriageOutcome::kReproduces;
      if (!row.first) row.first = cell.build;
      row.last = cell.build;
    } else if (v.kind() == oracle::VerdictKind::kPass) {
      cell.outcome = TriageOutcome::kPasses;
    } else if (v.kind() == oracle::VerdictKind::kToolchainError) {
      cell.outcome = TriageOutcome::kCannotRun;
    } else {
      cell.outcome = TriageOutcome::kOther;
    }
    row.cells.push_back(std::move(cell));
  }
  return row;
}

nlohmann::json to_json(const TriageRow& row) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : row.cells) {
    cells.push_back({{"build", c.build},
                     {"outcome", std::string(triage_outcome_name(c.outcome))},
                     {"signature", c.signature}});
  }
  nlohmann::json j = {{"builds", cells}};
  j["first_reproducing"] = row.first ? nlohmann::json(*row.first) : nlohmann::json(nullptr);
  j["last_reproducing"] = row.last ? nlohmann::json(*row.last) : nlohmann::json(nullptr);
  return j;
}

void record_triage(const BundleSummary& bundle, const TriageRow& row) {
  const auto path = bundle.dir / "verdict.json";
  nlohmann::json j = nlohmann::json::parse(read_text_file(path));
  j["triage"] = to_json(row);
  write_file_atomically(path, j.dump(2) + "\n");
}

std::string triage_table(const std::vector<BundleSummary>& bundles,
                         const std::vector<std::optional<TriageRow>>& rows,
                         const std::vector<TriageBuild>& builds) {
  std::size_t sig_width = 9;
  for (const auto& b : bundles) sig_width = std::max(sig_width, b.signature.size());
  std::vector<std::size_t> widths;
  for (const auto& b : builds) widths.push_back(std::max<std::size_t>(b.label.size(), 10));
  auto pad = [](const std::string& s, std::size_t w) {
    return s + std::string(w > s.size() ? w - s.size() : 0, ' ');
  };
  std::string out = pad("signature", sig_width);
  for (std::size_t i = 0; i < builds.size(); ++i) out += "  " + pad(builds[i].label, widths[i]);
  out += "  reproduces on\n";
  for (std::size_t r = 0; r < bundles.size(); ++r) {
    out += pad(bundles[r].signature, sig_width);
    const auto& row = rows[r];
    for (std::size_t i = 0; i < builds.size(); ++i) {
      const std::string cell =
          row ? std::string(triage_outcome_name(row->cells[i].outcome)) : std::string("-");
      out += "  " + pad(cell, widths[i]);
    }
    if (!row) {
      out += "  (not a TVM finding)";
    } else if (!row->first) {
      out += "  none";
    } else {
      out += "  " + *row->first + (*row->first == *row->last ? "" : " .. " + *row->last);
    }
    out += "\n";
  }
  return out;
}

}  // namespace aotfuzz::fuzz

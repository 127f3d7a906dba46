// Triage across TVM builds: a bundle's first finding line, replayed on each build.
#include "bundles/triage.h"

#include <algorithm>
#include <cstdio>
#include <set>
#include <sstream>
#include <stdexcept>

#include "bundles/bundle.h"
#include "bundles/replay.h"
#include "bundles/status_files.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/oracle.h"
#include "oracle/sut.h"
#include "systems/systems.h"

namespace aotfuzz::bundles {
namespace {}  // namespace

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
    systems_.push_back(systems::make_built_system(b.home.string()));
  }
}

Triage::~Triage() = default;

TriageCase load_triage_case(const std::filesystem::path& relay, const std::string& signature) {
  const std::string path = relay.string();
  TriageCase c;
  c.file = relay;
  std::string text;
  try {
    text = read_text_file(relay);
  } catch (const std::system_error&) {
    throw std::invalid_argument(path + ": cannot be read");
  }
  std::optional<ReplayLine> line;
  try {
    line = first_finding_line(parse_replay_lines(text, path));
    if (line) c.options = parse_case_flags(line->flags);
    c.module = ir::parse_module(text, path);
    ir::verify(c.module);
  } catch (const ir::Error& e) {
    throw std::invalid_argument(e.what());
  }
  if (!line) {
    throw std::invalid_argument(path +
                                ": no `// replay: FLAGS => SIGNATURE` line expecting a "
                                "finding, so neither the flags nor the finding are known");
  }
  c.flags = line->flags;
  if (oracle::system_of(c.options).spec().name != systems::built_system_name()) {
    throw std::invalid_argument(path + ":" + std::to_string(line->line) +
                                ": not a TVM finding (its replay line has no --sut tvm)");
  }
  c.signature = signature.empty() ? line->expected : signature;
  return c;
}

TriageCell triage_cell(const TriageCase& finding, const TriageBuild& build,
                       const std::shared_ptr<const oracle::SystemUnderTest>& system) {
  oracle::CaseOptions o = finding.options;
  o.sut = system;
  TriageCell cell;
  cell.build = build.label;
  // A release without one of the case's options (USMP before v0.9, ...) cannot say whether the
  // bug is there: the case it would build is another one.
  if (auto why = system->refuses(o)) {
    cell.outcome = TriageOutcome::kCannotRun;
    cell.signature = "cannot-run";
    cell.summary = *why;
    return cell;
  }
  const oracle::Verdict v = oracle::run_case(finding.module, o).verdict;
  cell.signature = oracle::signature(v);
  cell.summary = oracle::summary(v);
  if (signature_matches(finding.signature, cell.signature)) {
    cell.outcome = TriageOutcome::kReproduces;
  } else if (v.kind() == oracle::VerdictKind::kPass || v.kind() == oracle::VerdictKind::kKnown) {
    // A listed behaviour of that release and nothing else: the finding's bug is not there.
    cell.outcome = TriageOutcome::kPasses;
  } else if (v.kind() == oracle::VerdictKind::kToolchainError) {
    cell.outcome = TriageOutcome::kCannotRun;
  } else {
    cell.outcome = TriageOutcome::kOther;
  }
  return cell;
}

std::optional<TriageRow> Triage::row(const BundleSummary& bundle) {
  std::optional<TriageCase> finding;
  try {
    finding = load_triage_case(bundle.dir / "reduced.relay", bundle.signature);
  } catch (const std::exception&) {
    return std::nullopt;  // a builtin finding, or a bundle without a finding line
  }
  TriageRow row;
  for (std::size_t i = 0; i < builds_.size(); ++i) {
    TriageCell cell = triage_cell(*finding, builds_[i], systems_[i]);
    if (cell.outcome == TriageOutcome::kReproduces) {
      if (!row.first) row.first = cell.build;
      row.last = cell.build;
    }
    row.cells.push_back(std::move(cell));
  }
  return row;
}

nlohmann::json to_json(const TriageRow& row) {
  nlohmann::json cells = nlohmann::json::array();
  for (const auto& c : row.cells) {
    nlohmann::json cell = {{"build", c.build},
                           {"outcome", std::string(triage_outcome_name(c.outcome))},
                           {"signature", c.signature}};
    if (c.outcome == TriageOutcome::kCannotRun) cell["why"] = c.summary;
    cells.push_back(std::move(cell));
  }
  nlohmann::json j = {{"builds", cells}};
  j["first_reproducing"] = row.first ? nlohmann::json(*row.first) : nlohmann::json(nullptr);
  j["last_reproducing"] = row.last ? nlohmann::json(*row.last) : nlohmann::json(nullptr);
  return j;
}

void record_triage(const BundleSummary& bundle, const TriageRow& row) {
  const auto path = bundle.dir / "verdict.json";
  BundleLock lock(bundle.dir);
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
  // A cell that says nothing of the bug says why, once per build and reason.
  std::set<std::string> why;
  for (const auto& row : rows) {
    if (!row) continue;
    for (const auto& c : row->cells) {
      if (c.outcome == TriageOutcome::kCannotRun) {
        why.insert("cannot-run on " + c.build + ": " + c.summary + "\n");
      }
    }
  }
  for (const auto& line : why) out += line;
  return out;
}

}  // namespace aotfuzz::bundles

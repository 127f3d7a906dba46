// JUnit cases of the pre-merge gate.
#include "report/junit_suites.h"

#include <algorithm>

#include "fuzz/campaign_report.h"

#include <filesystem>

namespace aotfuzz::report {

JUnitSuite replay_suite(const std::vector<bundles::FileReplay>& files, const std::string& name) {
  JUnitSuite suite;
  suite.name = name;
  for (const auto& f : files) {
    JUnitCase c;
    std::filesystem::path p(f.path);
    std::string cls = p.parent_path().lexically_normal().generic_string();
    for (auto& ch : cls) ch = ch == '/' ? '.' : ch;
    while (!cls.empty() && cls.front() == '.') cls.erase(cls.begin());
    c.classname = cls.empty() ? "corpus" : cls;
    c.name = p.filename().string();
    c.seconds = f.elapsed.count() / 1000.0;
    c.failed = f.failed();
    c.error = f.cannot_run();
    c.skipped = f.interrupted && !c.failed && !c.error;
    if (c.failed) {
      std::size_t bad = 0;
      for (const auto& r : f.runs) bad += !r.ok && !r.environment;
      c.message = f.error.empty() ? std::to_string(bad) + " of " + std::to_string(f.runs.size()) +
                                        " replay expectations failed"
                                  : f.error;
      c.details = f.failure_text();
    } else if (c.error) {
      const auto first = std::find_if(f.runs.begin(), f.runs.end(),
                                      [](const bundles::ReplayRun& r) { return r.environment; });
      c.message = "could not run (the environment, not a finding): " + first->summary;
      c.details = f.failure_text();
    } else if (c.skipped) {
      c.message = "interrupted before this file's replay lines ran";
    }
    for (const auto& r : f.runs) {
      c.output += "'" + r.line.flags + "' => " + r.actual +
                  (r.ok            ? ""
                   : r.environment ? " (could not run; expected " + r.line.expected + ")"
                                   : " (expected " + r.line.expected + ")") +
                  "\n";
    }
    suite.cases.push_back(std::move(c));
  }
  return suite;
}

JUnitCase fuzz_shard_case(const fuzz::CampaignResult& result,
                          const fuzz::CampaignOptions& options) {
  JUnitCase c;
  c.classname = "fuzz";
  c.name = "fuzz shard " + std::to_string(options.shard.index) + "/" +
           std::to_string(options.shard.count) + " (seed " + std::to_string(options.seed) + ")";
  c.seconds = result.elapsed.count() / 1000.0;
  c.failed = result.exit_code() == 1;
  // Every case the campaign had to compile failed in the environment: nothing was tested.
  c.error = result.exit_code() == 3;
  if (c.error) {
    c.message = "could not run (the environment, not a finding): " +
                (result.environment_failure.empty()
                     ? "every case that reached the compiler was a toolchain-error"
                     : result.environment_failure);
  }
  if (c.failed) {
    c.message = std::to_string(result.unique_signatures()) + " unique findings in " +
                std::to_string(result.stats.cases) + " cases";
    for (const auto& f : result.findings) {
      c.details += f.signature + ": " + (f.summary.empty() ? "(no summary)" : f.summary) +
                   "\n  replay: " + f.replay + "\n";
    }
    for (const auto& sig : result.known_seen) c.details += sig + " (bundle exists)\n";
  }
  c.output = fuzz::format_summary(result, options);
  return c;
}

ShardOutcome shard_outcome(const fuzz::CampaignResult& result,
                           const fuzz::CampaignOptions& options) {
  ShardOutcome o;
  o.junit = fuzz_shard_case(result, options);
  o.findings = result.findings;
  o.exit_code = result.exit_code();
  return o;
}

nlohmann::json to_json(const ShardOutcome& o) {
  nlohmann::json findings = nlohmann::json::array();
  for (const auto& f : o.findings) {
    findings.push_back({{"signature", f.signature},
                        {"case", f.case_index},
                        {"summary", f.summary},
                        {"replay", f.replay},
                        {"bundle", f.bundle_dir},
                        {"bundle_written", f.bundle_written}});
  }
  const JUnitCase& c = o.junit;
  return {{"junit",
           {{"classname", c.classname},
            {"name", c.name},
            {"seconds", c.seconds},
            {"failed", c.failed},
            {"error", c.error},
            {"message", c.message},
            {"details", c.details},
            {"output", c.output}}},
          {"findings", findings},
          {"exit_code", o.exit_code}};
}

ShardOutcome shard_outcome_from_json(const nlohmann::json& j) {
  ShardOutcome o;
  const auto& c = j.at("junit");
  o.junit.classname = c.at("classname").get<std::string>();
  o.junit.name = c.at("name").get<std::string>();
  o.junit.seconds = c.at("seconds").get<double>();
  o.junit.failed = c.at("failed").get<bool>();
  o.junit.error = c.at("error").get<bool>();
  o.junit.message = c.at("message").get<std::string>();
  o.junit.details = c.at("details").get<std::string>();
  o.junit.output = c.at("output").get<std::string>();
  for (const auto& f : j.at("findings")) {
    fuzz::Finding finding;
    finding.signature = f.at("signature").get<std::string>();
    finding.case_index = f.at("case").get<std::uint64_t>();
    finding.summary = f.at("summary").get<std::string>();
    finding.replay = f.at("replay").get<std::string>();
    finding.bundle_dir = f.at("bundle").get<std::string>();
    finding.bundle_written = f.at("bundle_written").get<bool>();
    o.findings.push_back(std::move(finding));
  }
  o.exit_code = j.at("exit_code").get<int>();
  return o;
}

std::string replay_status_line(const bundles::FileReplay& f) {
  if (f.ok()) {
    const auto unchecked = std::count_if(f.runs.begin(), f.runs.end(),
                                         [](const bundles::ReplayRun& r) { return r.unchecked; });
    return "ok    " + f.path + " (" + std::to_string(f.runs.size()) + " runs, " +
           std::to_string(f.elapsed.count()) + " ms" +
           (unchecked > 0 ? ", " + std::to_string(unchecked) + " not checked with --no-run" : "") +
           ")";
  }
  if (f.failed()) return "FAIL  " + f.path;
  if (f.cannot_run()) return "ERROR " + f.path + " (could not run: the environment)";
  return "SKIP  " + f.path + " (interrupted)";
}

}  // namespace aotfuzz::report

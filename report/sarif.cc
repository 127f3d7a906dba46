#include "report/sarif.h"

#include <filesystem>
#include <map>

#include "host/shell_words.h"
#include "oracle/oracle.h"

namespace aotfuzz::report {

namespace {

using json = nlohmann::json;

// SARIF's artifactLocation.uri is a URI reference: percent-encode what a path may hold that a
// URI may not.
std::string uri_of(const std::string& path) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : path) {
    const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                       c == '/' || c == '.' || c == '_' || c == '-' || c == '~';
    if (plain) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

namespace fs = std::filesystem;

// A path under the root is written relative to it, under %SRCROOT%, so that a dashboard finds it
// in the repository whatever directory the runner checked it out to; one outside (a findings
// directory under /tmp) as an absolute file URI, which needs no base.
json location(const std::string& path, int line, const fs::path& root) {
  std::error_code ec;
  fs::path p = fs::path(path);
  if (p.is_relative()) p = fs::current_path(ec) / p;
  p = p.lexically_normal();
  const fs::path rel = p.lexically_relative(root);
  json artifact;
  if (!rel.empty() && *rel.begin() != "..") {
    artifact = {{"uri", uri_of(rel.generic_string())}, {"uriBaseId", "%SRCROOT%"}};
  } else {
    artifact = {{"uri", "file://" + uri_of(p.generic_string())}};
  }
  json physical = {{"artifactLocation", artifact}};
  if (line > 0) physical["region"] = {{"startLine", line}};
  return {{"physicalLocation", physical}};
}

// The rule of a signature is its kind and stage ("arity:codegen"): few rules, stable ids.
std::string rule_of(const std::string& signature) {
  const auto first = signature.find(':');
  if (first == std::string::npos) return signature;
  const auto second = signature.find(':', first + 1);
  return signature.substr(0, second);
}

}  // namespace

fs::path source_root() {
  std::error_code ec;
  const fs::path cwd = fs::current_path(ec);
  for (fs::path dir = cwd; !dir.empty(); dir = dir.parent_path()) {
    if (fs::exists(dir / ".git", ec)) return dir;
    if (dir == dir.parent_path()) break;
  }
  return cwd;
}

json sarif_log(const std::string& version, const std::vector<bundles::FileReplay>& replays,
               const std::vector<fuzz::Finding>& findings, const std::string& root_dir) {
  const fs::path root =
      (root_dir.empty() ? source_root() : fs::absolute(fs::path(root_dir))).lexically_normal();
  json results = json::array();
  std::map<std::string, std::string> rules;  // id -> description
  auto add = [&](const std::string& rule, const std::string& description, json result) {
    rules.emplace(rule, description);
    result["ruleId"] = rule;
    results.push_back(std::move(result));
  };
  for (const auto& file : replays) {
    if (!file.error.empty()) {
      add("replay-error", "A corpus file cannot be read or its header is malformed",
          {{"level", "error"},
           {"message", {{"text", file.error}}},
           {"locations", json::array({location(file.path, 0, root)})}});
      continue;
    }
    for (const auto& run : file.runs) {
      // A line the environment could not run is no result about the code (JUnit says <error>).
      if (run.ok || run.environment) continue;
      const std::string command = "aotfuzz run " + host::shell_quote_path(file.path) +
                                  (run.line.flags.empty() ? "" : " " + run.line.flags);
      add("unmet-expectation:" + rule_of(run.actual),
          "A corpus file's replay line expects another verdict than the pipeline now gives",
          {{"level", "error"},
           {"message",
            {{"text", "expected " + run.line.expected + ", got " + run.actual + " (" + run.summary +
                          "). Replay: " + command}}},
           {"locations", json::array({location(file.path, run.line.line, root)})},
           {"properties", {{"expected", run.line.expected}, {"actual", run.actual}}}});
    }
  }
  for (const auto& f : findings) {
    // The summary says what went wrong where ("crash at fuse: SIGSEGV"); the signature when a
    // report has lost it.
    const std::string what = f.summary.empty() ? f.signature : f.summary;
    json result = {{"level", "error"},
                   {"message", {{"text", what + ". Replay: " + f.replay}}},
                   {"properties", {{"signature", f.signature}, {"case", f.case_index}}}};
    if (f.bundle_written && !f.bundle_dir.empty()) {
      result["locations"] = json::array({location(f.bundle_dir + "/reduced.relay", 0, root)});
    }
    add(rule_of(f.signature), "A campaign finding: the pipeline under test is wrong here",
        std::move(result));
  }
  json rule_list = json::array();
  for (const auto& [id, description] : rules) {
    rule_list.push_back({{"id", id}, {"shortDescription", {{"text", description}}}});
  }
  return {{"$schema", kSarifSchema},
          {"version", "2.1.0"},
          {"runs",
           json::array(
               {{{"tool",
                  {{"driver", {{"name", "aotfuzz"}, {"version", version}, {"rules", rule_list}}}}},
                 {"results", results}}})}};
}

}  // namespace aotfuzz::report

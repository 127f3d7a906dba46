#include "fuzz/sarif.h"

#include <map>

#include "host/shell_words.h"
#include "oracle/oracle.h"

namespace aotfuzz::fuzz {

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

json location(const std::string& path, int line) {
  json physical = {{"artifactLocation", {{"uri", uri_of(path)}, {"uriBaseId", "%SRCROOT%"}}}};
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

json sarif_log(const std::string& version, const std::vector<FileReplay>& replays,
               const std::vector<Finding>& findings) {
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
           {"locations", json::array({location(file.path, 0)})}});
      continue;
    }
    for (const auto& run : file.runs) {
      if (run.ok) continue;
      const std::string command =
          "aotfuzz run " + host::shell_quote_path(file.path) + (run.line.flags.empty() ? "" : " " + run.line.flags);
      add("unmet-expectation:" + rule_of(run.actual),
          "A corpus file's replay line expects another verdict than the pipeline now gives",
          {{"level", "error"},
           {"message",
            {{"text", "expected " + run.line.expected + ", got " + run.actual + " (" +
                          run.summary + "). Replay: " + command}}},
           {"locations", json::array({location(file.path, run.line.line)})},
           {"properties", {{"expected", run.line.expected}, {"actual", run.actual}}}});
    }
  }
  for (const auto& f : findings) {
    json result = {{"level", "error"},
                   {"message", {{"text", f.summary + ". Replay: " + f.replay}}},
                   {"properties", {{"signature", f.signature}, {"case", f.case_index}}}};
    if (f.bundle_written && !f.bundle_dir.empty()) {
      result["locations"] = json::array({location(f.bundle_dir + "/reduced.relay", 0)});
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
           json::array({{{"tool",
                          {{"driver",
                            {{"name", "aotfuzz"},
                             {"version", version},
                             {"rules", rule_list}}}}},
                         {"results", results}}})}};
}

}  // namespace aotfuzz::fuzz

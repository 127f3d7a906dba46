#include "bundles/findings_list.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <system_error>

#include "bundles/bundle.h"

namespace aotfuzz::bundles {

namespace fs = std::filesystem;

namespace {

std::time_t file_time(const fs::path& path) {
  struct stat st {};
  return ::stat(path.c_str(), &st) == 0 ? st.st_mtime : 0;
}

}  // namespace

std::string utc(std::time_t t) {
  if (t == 0) return "-";
  char buf[32];
  std::tm tm{};
  gmtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::vector<BundleSummary> list_bundles(const fs::path& dir) {
  std::vector<BundleSummary> out;
  std::error_code ec;
  fs::directory_iterator it(dir, ec);
  if (ec) throw std::system_error(ec, "cannot read " + dir.string());
  for (const auto& entry : it) {
    const fs::path verdict = entry.path() / "verdict.json";
    if (!entry.is_directory() || !fs::exists(verdict)) continue;
    BundleSummary b;
    b.dir = entry.path();
    try {
      const auto j = nlohmann::json::parse(read_text_file(verdict));
      b.signature = j.value("signature", "");
      b.replay = j.value("replay", "");
      if (j.contains("verdict")) b.verdict_summary = j.at("verdict").value("summary", "");
      if (j.contains("triage")) b.triage = j.at("triage");
      if (j.contains("bisect")) b.bisect = j.at("bisect");
      const auto& reduction = j.at("info").at("reduction");
      b.reduction_complete = reduction.value("complete", true);
      b.reduced_ops = reduction.at("after").value("ops", -1);
    } catch (const std::exception&) {
      // A bundle from an older layout still lists, with what it has.
    }
    if (b.signature.empty()) continue;
    b.seen = read_seen(b.dir);
    if (b.seen.first_seen == 0) {
      b.seen.first_seen = b.seen.last_seen = file_time(verdict);
      b.seen.hits = 1;
      b.seen.campaigns = 1;
    }
    out.push_back(std::move(b));
  }
  std::sort(out.begin(), out.end(),
            [](const auto& a, const auto& b) { return a.signature < b.signature; });
  return out;
}

std::optional<std::string> environment_failure(const FileReplay& replay) {
  if (!replay.error.empty()) return replay.error;
  // Any line the environment kept from judging: the bundle's answer is not known here.
  for (const auto& run : replay.runs) {
    if (run.environment) return run.summary;
  }
  return std::nullopt;
}

void rerun_bundle(BundleSummary& bundle, const ReplayOverride& override) {
  const FileReplay r = replay_file((bundle.dir / "reduced.relay").string(), override);
  if (auto why = environment_failure(r)) {
    bundle.cannot_run = *why;
    return;
  }
  bundle.reproduces = r.ok();
  bundle.rerun_detail = r.ok() ? "" : r.failure_text();
  try {
    BundleLock lock(bundle.dir);
    nlohmann::json j = nlohmann::json::object();
    try {
      j = nlohmann::json::parse(read_text_file(bundle.dir / "seen.json"));
    } catch (const std::exception&) {
      j = {{"first_seen", bundle.seen.first_seen},
           {"last_seen", bundle.seen.last_seen},
           {"hits", bundle.seen.hits},
           {"campaigns", bundle.seen.campaigns}};
    }
    j["rerun"] = {{"time", std::time(nullptr)}, {"reproduces", r.ok()}};
    write_file_atomically(bundle.dir / "seen.json", j.dump(2) + "\n");
  } catch (const std::exception& e) {
    bundle.record_error = e.what();
  }
}

std::string findings_table(const std::vector<BundleSummary>& bundles) {
  std::string out;
  char line[512];
  std::snprintf(line, sizeof line, "%-34s %-20s %-20s %7s %4s %-9s %s\n", "signature", "first seen",
                "last seen", "hits", "ops", "reduced", "reproduces");
  out += line;
  for (const auto& b : bundles) {
    const std::string reproduces = !b.cannot_run.empty() ? "cannot-run: " + b.cannot_run
                                   : !b.reproduces       ? "-"
                                   : *b.reproduces       ? "yes"
                                                         : "no (fixed)";
    std::snprintf(line, sizeof line, "%-34s %-20s %-20s %7llu %4s %-9s %s\n", b.signature.c_str(),
                  utc(b.seen.first_seen).c_str(), utc(b.seen.last_seen).c_str(),
                  static_cast<unsigned long long>(b.seen.hits),
                  b.reduced_ops < 0 ? "-" : std::to_string(b.reduced_ops).c_str(),
                  b.reduction_complete ? "yes" : "partly", reproduces.c_str());
    out += line;
  }
  return out;
}

nlohmann::json to_json(const std::vector<BundleSummary>& bundles) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& b : bundles) {
    nlohmann::json j = {{"signature", b.signature},
                        {"dir", b.dir.string()},
                        {"first_seen", b.seen.first_seen},
                        {"last_seen", b.seen.last_seen},
                        {"hits", b.seen.hits},
                        {"campaigns", b.seen.campaigns},
                        {"reduced_ops", b.reduced_ops},
                        {"reduction_complete", b.reduction_complete},
                        {"replay", b.replay}};
    if (b.reproduces) j["reproduces"] = *b.reproduces;
    if (!b.cannot_run.empty()) j["cannot_run"] = b.cannot_run;
    if (!b.triage.is_null()) j["triage"] = b.triage;
    if (!b.bisect.is_null()) j["bisect"] = b.bisect;
    out.push_back(std::move(j));
  }
  return out;
}

}  // namespace aotfuzz::bundles

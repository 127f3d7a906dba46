// Merging findings directories: bundles by signature, counts by source, campaign records and plot
// data by source, and the report over the whole.
#include "bundles/merge_findings.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <system_error>
#include <tuple>
#include <utility>

#include "bundles/bundle.h"
#include "bundles/findings_list.h"
#include "bundles/status_files.h"
#include "host/shell_words.h"
#include "host/tempdir.h"

namespace aotfuzz::bundles {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kMergeRecord = "merge.json";
constexpr const char* kExamples = "examples";
constexpr const char* kSources = "sources";
constexpr std::string_view kTempPrefix = ".tmp-";

// The target's lock, held for the whole merge: flock, so that a merge killed at any moment leaves
// it free for the next.
class TargetLock {
 public:
  explicit TargetLock(const fs::path& into) {
    const fs::path path = into / kMergeLockName;
    fd_ = ::open(path.c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
    if (fd_ < 0) {
      throw std::system_error(errno, std::generic_category(), "cannot open " + path.string());
    }
    if (::flock(fd_, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd_);
      if (err == EWOULDBLOCK) {
        throw MergeBusy(into.string() + ": another merge is writing into it (" + path.string() +
                        " is locked); run this one once it has finished");
      }
      throw std::system_error(err, std::generic_category(), "cannot lock " + path.string());
    }
  }
  ~TargetLock() { ::close(fd_); }
  TargetLock(const TargetLock&) = delete;
  TargetLock& operator=(const TargetLock&) = delete;

 private:
  int fd_ = -1;
};

std::optional<std::string> read_if_exists(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return std::nullopt;
  return read_text_file(path);
}

// Writes `text` to `path` (atomically) unless it already holds it; true when it wrote.
bool write_if_changed(const fs::path& path, const std::string& text) {
  if (read_if_exists(path) == text) return false;
  fs::create_directories(path.parent_path());
  write_file_atomically(path, text);
  return true;
}

json seen_json(const SeenRecord& r) {
  return {{"first_seen", r.first_seen},
          {"last_seen", r.last_seen},
          {"hits", r.hits},
          {"campaigns", r.campaigns}};
}

SeenRecord seen_of(const json& j) {
  SeenRecord r;
  if (!j.is_object()) return r;
  r.first_seen = j.value("first_seen", std::time_t{0});
  r.last_seen = j.value("last_seen", std::time_t{0});
  r.hits = j.value("hits", std::uint64_t{0});
  r.campaigns = j.value("campaigns", std::uint64_t{0});
  return r;
}

// One bundle of a signature in one directory.
struct Copy {
  std::string label;  // the source's; "" for the target's own bundle
  fs::path dir;
  json verdict;
  SeenRecord seen;
  // The reduced graph's size (ops, inputs, nodes; INT_MAX when unknown) and text without its
  // comment lines: the smaller graph wins, and equal sizes are decided by the text, so the winner
  // does not depend on the order of the sources.
  std::tuple<long long, long long, long long> size{LLONG_MAX, LLONG_MAX, LLONG_MAX};
  std::string graph;
};

long long size_part(const json& after, const char* key) {
  const auto it = after.find(key);
  return it != after.end() && it->is_number_integer() ? it->get<long long>() : LLONG_MAX;
}

std::string without_comments(const std::string& text) {
  std::istringstream in(text);
  std::string line, out;
  while (std::getline(in, line)) {
    if (line.rfind("//", 0) == 0) continue;
    out += line + "\n";
  }
  return out;
}

// The bundles of `dir` by signature.
std::map<std::string, Copy> read_copies(const fs::path& dir, const std::string& label) {
  std::map<std::string, Copy> out;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  for (auto& b : list_bundles(dir)) {
    // A bundle being built (`.tmp-<pid>-...`, bundles/bundle.cc) is no bundle yet.
    if (b.dir.filename().string().rfind('.', 0) == 0) continue;
    Copy c;
    c.label = label;
    c.dir = b.dir;
    c.seen = b.seen;
    try {
      c.verdict = json::parse(read_text_file(b.dir / "verdict.json"));
    } catch (const std::exception&) {
      continue;  // list_bundles read it a moment ago; a bundle swapped meanwhile is left out
    }
    if (c.verdict.contains("info") && c.verdict["info"].is_object()) {
      const auto& info = c.verdict["info"];
      if (info.contains("reduction") && info["reduction"].is_object() &&
          info["reduction"].contains("after")) {
        const auto& after = info["reduction"]["after"];
        c.size = {size_part(after, "ops"), size_part(after, "inputs"), size_part(after, "nodes")};
      }
    }
    if (auto text = read_if_exists(b.dir / "reduced.relay")) c.graph = without_comments(*text);
    out.emplace(b.signature, std::move(c));
  }
  return out;
}

bool better(const Copy& a, const Copy& b) {
  return std::tie(a.size, a.graph, a.label) < std::tie(b.size, b.graph, b.label);
}

// Copies the bundle `from` into `to` (which exists), leaving out what the merge writes itself.
void copy_bundle_files(const fs::path& from, const fs::path& to) {
  for (const auto& entry : fs::directory_iterator(from)) {
    const std::string name = entry.path().filename().string();
    if (name == "seen.json" || name == kMergeRecord || name == kExamples) continue;
    if (!name.empty() && name[0] == '.') continue;
    fs::copy(entry.path(), to / name, fs::copy_options::recursive);
  }
}

fs::path make_temp_dir(const fs::path& into) {
  std::string templ =
      (into / (std::string(kTempPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  if (::mkdtemp(templ.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp(" + templ + ")");
  }
  fs::permissions(templ, fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  return templ;
}

// How the merge of one signature goes.
class SignatureMerge {
 public:
  SignatureMerge(const fs::path& into, const std::string& into_label, std::string signature,
                 std::optional<Copy> own, std::vector<Copy> sources)
      : into_(into),
        into_label_(into_label),
        signature_(std::move(signature)),
        own_(std::move(own)),
        sources_(std::move(sources)) {}

  enum class Outcome { kAdded, kReplaced, kUpdated, kUnchanged };

  Outcome run() {
    json record = json::object();
    if (own_) {
      if (auto text = read_if_exists(own_->dir / kMergeRecord)) {
        record = json::parse(*text, nullptr, /*allow_exceptions=*/false);
        if (!record.is_object()) record = json::object();
      }
    }
    // A bundle a campaign in the target wrote itself has no "from": its graph as found is kept
    // as an example should a source's smaller graph replace it.
    const bool own_from_merge = record.contains("from");
    json contributions = record.value("contributions", json::object());
    if (!contributions.is_object()) contributions = json::object();
    const SeenRecord seen = merged_seen(contributions);
    for (const auto& c : sources_) contributions[c.label] = seen_json(c.seen);

    const Copy* winner = own_ ? &*own_ : nullptr;
    for (const auto& c : sources_) {
      if (winner == nullptr || better(c, *winner)) winner = &c;
    }
    const bool keep_own = own_ && winner == &*own_;
    record["contributions"] = contributions;
    if (!keep_own) record["from"] = winner->label;

    const fs::path dir = into_ / bundle_dir_name(signature_);
    const std::string verdict = verdict_text(*winner, dir);
    if (keep_own) {
      bool changed = write_if_changed(dir / "verdict.json", verdict);
      changed |= write_if_changed(dir / "replay.txt", replay_of(*winner, dir));
      changed |= write_examples(dir);
      // What else seen.json says of the kept graph (`findings --rerun`'s "rerun") stays.
      json seen_text = json::object();
      if (auto text = read_if_exists(dir / "seen.json")) {
        seen_text = json::parse(*text, nullptr, /*allow_exceptions=*/false);
        if (!seen_text.is_object()) seen_text = json::object();
      }
      seen_text.update(seen_json(seen));
      changed |= write_if_changed(dir / "seen.json", seen_text.dump(2) + "\n");
      changed |= write_if_changed(dir / kMergeRecord, record.dump(2) + "\n");
      return changed ? Outcome::kUpdated : Outcome::kUnchanged;
    }
    const fs::path tmp = make_temp_dir(into_);
    try {
      copy_bundle_files(winner->dir, tmp);
      if (own_) {
        std::error_code ec;
        if (fs::is_directory(own_->dir / kExamples, ec)) {
          fs::copy(own_->dir / kExamples, tmp / kExamples, fs::copy_options::recursive);
        }
        if (!own_from_merge) {
          if (auto original = read_if_exists(own_->dir / "original.relay")) {
            write_if_changed(tmp / kExamples / (into_label_ + ".relay"), *original);
          }
        }
      }
      write_file_atomically(tmp / "verdict.json", verdict);
      write_file_atomically(tmp / "replay.txt", replay_of(*winner, dir));
      write_examples(tmp);
      write_file_atomically(tmp / "seen.json", seen_json(seen).dump(2) + "\n");
      write_file_atomically(tmp / kMergeRecord, record.dump(2) + "\n");
    } catch (...) {
      std::error_code ignored;
      fs::remove_all(tmp, ignored);
      throw;
    }
    if (!own_) {
      fs::rename(tmp, dir);
      return Outcome::kAdded;
    }
    // One atomic exchange, as a campaign swaps a bundle for its reduction (bundles/bundle.cc).
    if (::renameat2(AT_FDCWD, tmp.c_str(), AT_FDCWD, dir.c_str(), RENAME_EXCHANGE) != 0) {
      const int err = errno;
      std::error_code ignored;
      fs::remove_all(tmp, ignored);
      throw std::system_error(err, std::generic_category(), "exchange " + dir.string());
    }
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return Outcome::kReplaced;
  }

 private:
  // The target's counts with each source's earlier contribution taken out and its present one
  // put in: merging a source again changes nothing, and hits a campaign in the target added stay.
  SeenRecord merged_seen(const json& contributions) const {
    SeenRecord s = own_ ? own_->seen : SeenRecord{};
    for (const auto& c : sources_) {
      const auto it = contributions.find(c.label);
      if (it != contributions.end()) {
        const SeenRecord before = seen_of(*it);
        s.hits -= std::min(s.hits, before.hits);
        s.campaigns -= std::min(s.campaigns, before.campaigns);
      }
      s.hits += c.seen.hits;
      s.campaigns += c.seen.campaigns;
      if (c.seen.first_seen != 0 && (s.first_seen == 0 || c.seen.first_seen < s.first_seen)) {
        s.first_seen = c.seen.first_seen;
      }
      s.last_seen = std::max(s.last_seen, c.seen.last_seen);
    }
    return s;
  }

  // The winner's verdict.json, its replay command pointing into the target, with the triage row
  // and bisection of another copy when it has none.
  std::string verdict_text(const Copy& winner, const fs::path& dir) const {
    json j = winner.verdict;
    if (j.contains("flags") && j["flags"].is_string()) j["replay"] = replay_line(winner, dir);
    for (const char* key : {"triage", "bisect"}) {
      if (j.contains(key)) continue;
      std::vector<const Copy*> others;
      if (own_) others.push_back(&*own_);
      for (const auto& c : sources_) others.push_back(&c);
      for (const Copy* c : others) {
        if (c->verdict.contains(key)) {
          j[key] = c->verdict[key];
          break;
        }
      }
    }
    return j.dump(2) + "\n";
  }

  std::string replay_line(const Copy& winner, const fs::path& dir) const {
    return "aotfuzz run " + host::shell_quote_path((dir / "reduced.relay").string()) + " " +
           winner.verdict["flags"].get<std::string>();
  }

  std::string replay_of(const Copy& winner, const fs::path& dir) const {
    if (winner.verdict.contains("flags") && winner.verdict["flags"].is_string()) {
      return replay_line(winner, dir) + "\n";
    }
    return read_if_exists(winner.dir / "replay.txt").value_or("");
  }

  // Each source's graph as found, examples/<label>.relay, and the examples a source carried from
  // its own sources (a merged directory merged again).
  bool write_examples(const fs::path& dir) const {
    bool changed = false;
    for (const auto& c : sources_) {
      if (auto original = read_if_exists(c.dir / "original.relay")) {
        changed |= write_if_changed(dir / kExamples / (c.label + ".relay"), *original);
      }
      std::error_code ec;
      if (!fs::is_directory(c.dir / kExamples, ec)) continue;
      for (const auto& e : fs::directory_iterator(c.dir / kExamples)) {
        const fs::path to = dir / kExamples / e.path().filename();
        if (!e.is_regular_file() || fs::exists(to)) continue;
        changed |= write_if_changed(to, read_text_file(e.path()));
      }
    }
    return changed;
  }

  fs::path into_;
  std::string into_label_;
  std::string signature_;
  std::optional<Copy> own_;
  std::vector<Copy> sources_;
};

// A source's campaign records, renamed `<label>--<name>` with its label in "source".
bool merge_campaign_records(const fs::path& into, const fs::path& source,
                            const std::string& label) {
  bool changed = false;
  std::error_code ec;
  if (!fs::is_directory(source / "campaigns", ec)) return false;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(source / "campaigns")) {
    const std::string name = e.path().filename().string();
    if (e.is_regular_file() && e.path().extension() == ".json" && name[0] != '.') {
      files.push_back(e.path());
    }
  }
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    json j = json::parse(read_text_file(f), nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) continue;  // not a record (read_campaign_records skips it too)
    // Appended piecewise: GCC 12 warns falsely (-Wrestrict) on "/" + string at -O3.
    std::string source = label;
    if (j.contains("source") && j["source"].is_string()) {
      source += '/';
      source += j["source"].get<std::string>();
    }
    j["source"] = source;
    changed |= write_if_changed(into / "campaigns" / (label + "--" + f.filename().string()),
                                j.dump(2) + "\n");
  }
  return changed;
}

// A source's plot_data and fuzzer_stats under sources/<label>/, and those it holds of its own
// sources under sources/<label>--<name>/.
bool merge_status_files(const fs::path& into, const fs::path& source, const std::string& label) {
  bool changed = false;
  auto carry = [&](const fs::path& from, const std::string& name) {
    for (const char* file : {"plot_data", "fuzzer_stats"}) {
      if (auto text = read_if_exists(from / file)) {
        changed |= write_if_changed(into / kSources / name / file, *text);
      }
    }
  };
  carry(source, label);
  std::error_code ec;
  if (fs::is_directory(source / kSources, ec)) {
    std::vector<fs::path> inner;
    for (const auto& e : fs::directory_iterator(source / kSources)) {
      if (e.is_directory()) inner.push_back(e.path());
    }
    std::sort(inner.begin(), inner.end());
    for (const auto& d : inner) carry(d, label + "--" + d.filename().string());
  }
  return changed;
}

bool inside(const fs::path& child, const fs::path& parent) {
  const auto [p, c] = std::mismatch(parent.begin(), parent.end(), child.begin(), child.end());
  return p == parent.end();
}

}  // namespace

std::string merge_label(const fs::path& source) {
  fs::path p = source.lexically_normal();
  if (!p.has_filename()) p = p.parent_path();
  std::error_code ec;
  const fs::path canonical = fs::weakly_canonical(p, ec);
  const std::string name = (ec ? p : canonical).filename().string();
  return name.empty() ? "root" : name;
}

MergeResult merge_findings(const fs::path& into, const std::vector<fs::path>& sources,
                           const WriteReport& write_report) {
  if (sources.empty()) throw MergeUsageError("no source directory to merge");
  std::error_code ec;
  const fs::path target = fs::weakly_canonical(fs::absolute(into), ec);
  if (ec) throw MergeUsageError(into.string() + ": " + ec.message());
  std::map<std::string, fs::path> by_label;
  std::vector<std::pair<std::string, fs::path>> labelled;
  for (const auto& s : sources) {
    if (!fs::is_directory(s, ec)) throw MergeUsageError(s.string() + ": no such directory");
    const fs::path canonical = fs::canonical(s, ec);
    if (ec) throw MergeUsageError(s.string() + ": " + ec.message());
    if (canonical == target) {
      throw MergeUsageError(s.string() + ": the target is also a source (--into " + into.string() +
                            ")");
    }
    if (inside(target, canonical)) {
      throw MergeUsageError("--into " + into.string() + " lies inside the source " + s.string() +
                            ", which a merge never writes into");
    }
    if (inside(canonical, target)) {
      throw MergeUsageError(s.string() + ": a source inside the target --into " + into.string());
    }
    const std::string label = merge_label(s);
    const auto [it, fresh] = by_label.emplace(label, canonical);
    if (!fresh && it->second != canonical) {
      throw MergeUsageError("two sources are named " + label + " (" + it->second.string() +
                            " and " + canonical.string() +
                            "): a source is known by its directory's name");
    }
    if (fresh) labelled.emplace_back(label, canonical);
  }

  fs::create_directories(into);
  TargetLock lock(into);
  host::remove_stale_temp_dirs(into, kTempPrefix);

  // Every signature, with the target's bundle and the sources' bundles of it.
  std::map<std::string, Copy> own = read_copies(into, "");
  std::map<std::string, std::vector<Copy>> from_sources;
  for (const auto& [label, dir] : labelled) {
    for (auto& [signature, copy] : read_copies(dir, label)) {
      from_sources[signature].push_back(std::move(copy));
    }
  }
  MergeResult result;
  // The absolute path: replay lines in verdict.json work from any directory, as a campaign's do.
  const fs::path abs_into = fs::absolute(into).lexically_normal();
  for (auto& [signature, copies] : from_sources) {
    std::optional<Copy> mine;
    if (auto it = own.find(signature); it != own.end()) {
      mine = it->second;
      mine->dir = abs_into / it->second.dir.filename();
    }
    SignatureMerge m(abs_into, merge_label(into), signature, std::move(mine), std::move(copies));
    switch (m.run()) {
      case SignatureMerge::Outcome::kAdded:
        ++result.added;
        break;
      case SignatureMerge::Outcome::kReplaced:
        ++result.replaced;
        break;
      case SignatureMerge::Outcome::kUpdated:
        ++result.updated;
        break;
      case SignatureMerge::Outcome::kUnchanged:
        break;
    }
  }
  bool changed = result.added + result.replaced + result.updated > 0;
  for (const auto& [label, dir] : labelled) {
    changed |= merge_campaign_records(into, dir, label);
    changed |= merge_status_files(into, dir, label);
  }
  result.changed = changed;

  result.signatures = list_bundles(into).size();
  result.campaigns = read_campaign_records(into).size();
  // Only when something changed: the page says when it was made, and merging twice changes
  // nothing.
  if (write_report && (changed || !fs::exists(into / "report.html", ec))) {
    write_report(into);
    result.changed = true;
  }
  return result;
}

}  // namespace aotfuzz::bundles

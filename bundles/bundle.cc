// Atomic finding bundles and their discovery on resume.
#include "bundles/bundle.h"

#include <fcntl.h>
#include <stdlib.h>
#include <sys/file.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "bundles/replay.h"
#include "host/process.h"
#include "host/shell_words.h"
#include "host/tempdir.h"
#include "host/toolchain.h"
#include "ir/dot.h"
#include "ir/printer.h"
#include "oracle/module_diff.h"
#include "oracle/structure.h"

namespace aotfuzz::bundles {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kTempPrefix = ".tmp-";
constexpr std::size_t kMaxElementsShown = 4096;

void write_text(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  out.close();
  if (!out) {
    throw std::system_error(errno ? errno : EIO, std::generic_category(),
                            "cannot write " + path.string());
  }
}

std::string values_text(const std::string& what, const std::vector<reference::Value>& values,
                        const std::vector<std::string>& names = {}) {
  std::string out;
  for (std::size_t i = 0; i < values.size(); ++i) {
    out += what + " " + std::to_string(i);
    if (i < names.size()) out += " (%" + names[i] + ")";
    out += ": " + values[i].to_string(kMaxElementsShown) + "\n";
  }
  if (values.empty()) out += "(none)\n";
  return out;
}

// Calls `fn(dir, verdict)` for each bundle directory of `findings_dir` with a readable
// verdict.json object (temporary and hidden directories skipped).
template <class Fn>
void for_each_bundle(const fs::path& findings_dir, Fn fn) {
  std::error_code ec;
  for (auto it = fs::directory_iterator(findings_dir, ec); !ec && it != fs::directory_iterator();
       it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (name.empty() || name[0] == '.' || !it->is_directory()) continue;
    std::ifstream in(it->path() / "verdict.json");
    if (!in) continue;
    const auto j = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
    if (j.is_object()) fn(it->path(), j);
  }
}

}  // namespace

BundleLock::BundleLock(const fs::path& bundle_dir) {
  fd_ = ::open(bundle_dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (fd_ < 0) return;
  while (::flock(fd_, LOCK_EX) != 0 && errno == EINTR) {
  }
}

BundleLock::~BundleLock() {
  if (fd_ >= 0) ::close(fd_);
}

bool written_by_bundle_writer(std::string_view name) {
  static constexpr std::string_view kFiles[] = {"original.relay",
                                                "reduced.relay",
                                                "verdict.json",
                                                "inputs.txt",
                                                "expected.txt",
                                                "actual.txt",
                                                "c",
                                                "structure.diff",
                                                "original.dot",
                                                "reduced.dot",
                                                "reduced.svg",
                                                "replay.txt"};
  for (std::string_view f : kFiles) {
    if (name == f) return true;
  }
  const bool relay = name.size() > 6 && name.substr(name.size() - 6) == ".relay";
  return relay && (name.rfind("pipeline-", 0) == 0 || name.rfind("tvm-rules-", 0) == 0);
}

std::string bundle_dir_name(std::string_view signature) {
  std::string out;
  for (char c : signature) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-';
    out += ok ? c : '_';
  }
  return out.empty() ? "_" : out;
}

std::string relay_with_header(const ir::Module& module, const std::vector<std::string>& header) {
  std::string out;
  for (const auto& line : header) out += "// " + line + "\n";
  out += ir::print_module(module);
  if (out.empty() || out.back() != '\n') out += '\n';
  return out;
}

std::string replay_command(const std::string& relay_path, const oracle::CaseOptions& options) {
  return "aotfuzz run " + host::shell_quote_path(relay_path) + " " + oracle::replay_flags(options);
}

namespace {

// A private directory beside the bundles, where a bundle is built before it is moved into place.
fs::path make_temp_dir(const fs::path& findings_dir) {
  std::string templ =
      (findings_dir / (std::string(kTempPrefix) + std::to_string(::getpid()) + "-XXXXXX")).string();
  std::vector<char> buf(templ.begin(), templ.end());
  buf.push_back('\0');
  if (::mkdtemp(buf.data()) == nullptr) {
    throw std::system_error(errno, std::generic_category(), "mkdtemp(" + templ + ")");
  }
  return fs::path(buf.data());
}

// original.relay and reduced.relay, each with its header: the bundle's lines, the finding, its
// verdict and replay lines.
void write_relay_files(const fs::path& tmp, const Bundle& b, const std::string& flags) {
  std::vector<std::string> header = b.header;
  header.push_back("finding: " + b.signature);
  std::vector<std::string> original_header = header;
  original_header.push_back("verdict: " + oracle::summary(b.original_verdict));
  original_header.push_back(
      format_replay_line(flags, oracle::signature(b.original_verdict)).substr(3));
  std::vector<std::string> reduced_header = header;
  reduced_header.insert(reduced_header.end(), b.reduced_header.begin(), b.reduced_header.end());
  reduced_header.push_back("verdict: " + oracle::summary(b.reduced_result.verdict));
  reduced_header.push_back(
      format_replay_line(flags, oracle::signature(b.reduced_result.verdict)).substr(3));
  for (const auto& [f, sig] : b.extra_replays) {
    reduced_header.push_back(format_replay_line(f, sig).substr(3));
  }
  write_text(tmp / "original.relay", relay_with_header(b.original, original_header));
  write_text(tmp / "reduced.relay", relay_with_header(b.reduced, reduced_header));
}

void write_verdict_json(const fs::path& tmp, const Bundle& b, const std::string& flags,
                        const std::string& command) {
  nlohmann::json j;
  j["signature"] = b.signature;
  j["verdict"] = oracle::to_json(b.reduced_result.verdict);
  j["original_verdict"] = oracle::to_json(b.original_verdict);
  j["flags"] = flags;
  j["replay"] = command;
  j["info"] = b.info;
  write_text(tmp / "verdict.json", j.dump(2) + "\n");
}

// What the reduced graph's run had: inputs.txt, expected.txt, actual.txt and the C files.
void write_run(const fs::path& tmp, const Bundle& b) {
  std::vector<std::string> names;
  for (const auto& p : b.reduced.main()->params()) names.push_back(p->name());
  const auto& r = b.reduced_result;
  write_text(tmp / "inputs.txt", values_text("input", r.inputs, names));
  write_text(tmp / "expected.txt", values_text("output", r.expected));
  write_text(tmp / "actual.txt", r.actual.empty()
                                     ? std::string("(the program did not produce outputs: " +
                                                   oracle::summary(r.verdict) + ")\n")
                                     : values_text("output", r.actual));
  fs::create_directory(tmp / "c");
  for (const auto& [name, text] : r.files) write_text(tmp / "c" / name, text);
}

// A structure finding's diff, with the two modules in full next to it: what the pipeline made of
// the stage's input, and what TVM v0.8's rules make of it.
void write_structure_modules(const fs::path& tmp, const Bundle& b) {
  const auto& r = b.reduced_result;
  const auto* structure = std::get_if<oracle::Structure>(&r.verdict.detail);
  if (structure == nullptr) return;
  write_text(tmp / "structure.diff", structure->diff);
  const oracle::Stage stage = r.verdict.stage;
  // At codegen the two sides disagree on refusing the input; there is no stage module.
  const auto& stage_names = aot::module_stage_names();
  const bool has_module = static_cast<std::size_t>(stage) < stage_names.size();
  const std::string module_name(has_module ? stage_names[static_cast<std::size_t>(stage)] : "");
  if (has_module && r.stages && r.stages->failed != stage) {
    write_text(tmp / ("pipeline-" + module_name + ".relay"),
               oracle::print_by_name(r.stages->at(stage)));
  }
  if (has_module && r.stages) {
    if (auto want = oracle::reference_stage_module(stage, *r.stages, b.options.aot)) {
      write_text(tmp / ("tvm-rules-" + module_name + ".relay"), oracle::print_by_name(*want));
    }
  }
}

// original.dot, reduced.dot and, when Graphviz is installed, reduced.svg.
void write_pictures(const fs::path& tmp, const Bundle& b) {
  write_text(tmp / "original.dot", ir::to_dot(b.original));
  const std::string dot = ir::to_dot(b.reduced);
  write_text(tmp / "reduced.dot", dot);
  if (auto dot_exe = host::find_in_path("dot")) {
    host::RunLimits limits;
    limits.timeout = std::chrono::seconds(20);
    auto run = host::run_process(
        {*dot_exe, "-Tsvg", "-o", (tmp / "reduced.svg").string(), (tmp / "reduced.dot").string()},
        limits);
    if (!run.exited_ok()) {
      std::error_code ignored;
      fs::remove(tmp / "reduced.svg", ignored);
    }
  }
}

// verdict.json as the writer made it, with the top-level records others added to the one in
// place (a triage row, a bisect result) kept.
std::string merged_verdict_json(const fs::path& fresh, const fs::path& in_place) {
  nlohmann::json j = nlohmann::json::parse(read_text_file(fresh));
  std::ifstream in(in_place);
  const auto old = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (old.is_object()) {
    for (const auto& [key, value] : old.items()) {
      if (!j.contains(key)) j[key] = value;
    }
  }
  return j.dump(2) + "\n";
}

void move_entry(const fs::path& from, const fs::path& to) {
  std::error_code ec;
  if (fs::is_directory(from) && fs::exists(to)) {
    if (::renameat2(AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), RENAME_EXCHANGE) != 0) {
      throw std::system_error(errno, std::generic_category(), "exchange " + to.string());
    }
    fs::remove_all(from, ec);
    return;
  }
  fs::rename(from, to, ec);
  if (ec) throw std::system_error(ec, "rename to " + to.string());
}

// The writer's files of the bundle built in `tmp` put into the bundle at `dir`, one atomic
// rename each, verdict.json last; its stale files (a structure diff the new verdict lacks)
// removed; the rest of the bundle left as it is.
void replace_in_place(const fs::path& tmp, const fs::path& dir) {
  BundleLock lock(dir);
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name != "verdict.json" && written_by_bundle_writer(name) && !fs::exists(tmp / name)) {
      fs::remove_all(e.path(), ec);
    }
  }
  for (const auto& e : fs::directory_iterator(tmp)) {
    const std::string name = e.path().filename().string();
    if (name != "verdict.json") move_entry(e.path(), dir / name);
  }
  write_text(tmp / "verdict.json", merged_verdict_json(tmp / "verdict.json", dir / "verdict.json"));
  move_entry(tmp / "verdict.json", dir / "verdict.json");
}

// Moves the bundle built in `tmp` to `result.dir`: into the bundle there with `replace`, else
// left out when another campaign got there first.
BundleWriteResult move_into_place(const fs::path& tmp, BundleWriteResult result, bool replace) {
  std::error_code ec;
  // mkdtemp made it private; a bundle is meant to be read (CI artifacts, other users).
  fs::permissions(tmp,
                  fs::perms::owner_all | fs::perms::group_read | fs::perms::group_exec |
                      fs::perms::others_read | fs::perms::others_exec,
                  ec);
  if (replace && fs::is_directory(result.dir)) {
    try {
      replace_in_place(tmp, result.dir);
    } catch (...) {
      std::error_code ignored;
      fs::remove_all(tmp, ignored);
      throw;
    }
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    result.written = true;
    return result;
  }
  fs::rename(tmp, result.dir, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    if (fs::exists(result.dir)) return result;  // another campaign got there first
    throw std::system_error(ec, "rename to " + result.dir.string());
  }
  result.written = true;
  return result;
}

}  // namespace

BundleWriteResult write_bundle(const fs::path& findings_dir, const Bundle& b, bool replace) {
  BundleWriteResult result;
  result.dir = findings_dir / bundle_dir_name(b.signature);
  fs::create_directories(findings_dir);
  if (!replace && fs::exists(result.dir)) return result;
  const fs::path tmp = make_temp_dir(findings_dir);
  try {
    const std::string flags = oracle::replay_flags(b.options);
    const std::string command = replay_command((result.dir / "reduced.relay").string(), b.options);
    write_relay_files(tmp, b, flags);
    write_verdict_json(tmp, b, flags, command);
    write_run(tmp, b);
    write_structure_modules(tmp, b);
    write_pictures(tmp, b);
    write_text(tmp / "replay.txt", command + "\n");
  } catch (...) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    throw;
  }
  return move_into_place(tmp, std::move(result), replace);
}

std::vector<fs::path> incomplete_bundles(const fs::path& findings_dir) {
  std::vector<fs::path> out;
  for_each_bundle(findings_dir, [&](const fs::path& dir, const nlohmann::json& verdict) {
    const auto info = verdict.find("info");
    if (info == verdict.end() || !info->is_object()) return;
    const auto red = info->find("reduction");
    if (red != info->end() && red->is_object() && red->value("complete", true) == false) {
      out.push_back(dir);
    }
  });
  std::sort(out.begin(), out.end());
  return out;
}

std::string read_text_file(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::system_error(errno, std::generic_category(), "cannot read " + path.string());
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

std::set<std::string> load_bundle_signatures(const fs::path& findings_dir) {
  std::set<std::string> out;
  std::error_code ec;
  if (!fs::is_directory(findings_dir, ec)) return out;
  host::remove_stale_temp_dirs(findings_dir, kTempPrefix);
  for_each_bundle(findings_dir, [&](const fs::path&, const nlohmann::json& verdict) {
    if (verdict.contains("signature") && verdict["signature"].is_string()) {
      out.insert(verdict["signature"].get<std::string>());
    }
  });
  return out;
}

}  // namespace aotfuzz::bundles

// Replay lines, flag strings and corpus replay.
#include "fuzz/replay.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "aot/bugs.h"
#include "aot/pipeline.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/tvm_driver.h"
#include "oracle/verdict.h"

namespace aotfuzz::fuzz {
namespace {

using Clock = std::chrono::steady_clock;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

std::uint64_t parse_u64(const std::string& flag, const std::string& value) {
  if (value.empty() || value.find_first_not_of("0123456789") != std::string::npos ||
      value.size() > 19) {
    throw ReplayError(flag + " expects a non-negative integer, got '" + value + "'");
  }
  return std::stoull(value);
}

}  // namespace

std::vector<std::string> split_flags(std::string_view flags) {
  // POSIX shell words, as replay_flags quotes them (oracle::shell_quote): blanks separate words,
  // '...' is literal, "..." keeps \\, \", \$ and \` escapes, a backslash outside quotes escapes
  // the next character; '' is an empty word.
  std::vector<std::string> out;
  std::string cur;
  bool in_word = false;
  for (std::size_t i = 0; i < flags.size(); ++i) {
    const char c = flags[i];
    if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
      if (in_word) out.push_back(std::move(cur));
      cur.clear();
      in_word = false;
    } else if (c == '\'') {
      const std::size_t end = flags.find('\'', i + 1);
      if (end == std::string_view::npos) throw ReplayError("unterminated ' in flags");
      cur.append(flags.substr(i + 1, end - i - 1));
      i = end;
      in_word = true;
    } else if (c == '"') {
      std::size_t j = i + 1;
      for (; j < flags.size() && flags[j] != '"'; ++j) {
        if (flags[j] == '\\' && j + 1 < flags.size() &&
            std::string_view("\\\"$`").find(flags[j + 1]) != std::string_view::npos) {
          ++j;
        }
        cur += flags[j];
      }
      if (j >= flags.size()) throw ReplayError("unterminated \" in flags");
      i = j;
      in_word = true;
    } else if (c == '\\' && i + 1 < flags.size()) {
      cur += flags[++i];
      in_word = true;
    } else {
      cur += c;
      in_word = true;
    }
  }
  if (in_word) out.push_back(std::move(cur));
  return out;
}

oracle::CaseOptions parse_case_flags(std::string_view flags) {
  oracle::CaseOptions o;
  // A case from a file is judged as `aotfuzz run` judges it: a crashing pass is a verdict.
  o.isolate_in_process = true;
  const auto tokens = split_flags(flags);
  for (std::size_t i = 0; i < tokens.size(); ++i) {
    std::string flag = tokens[i];
    std::optional<std::string> inline_value;
    if (auto eq = flag.find('='); eq != std::string::npos && flag.rfind("--", 0) == 0) {
      inline_value = flag.substr(eq + 1);
      flag = flag.substr(0, eq);
    }
    auto value = [&]() -> std::string {
      if (inline_value) return *inline_value;
      if (i + 1 >= tokens.size()) throw ReplayError(flag + " needs a value");
      return tokens[++i];
    };
    auto no_value = [&] {
      if (inline_value) throw ReplayError(flag + " takes no value");
    };
    if (flag == "--merge") {
      no_value();
      o.aot.merge = true;
    } else if (flag == "--no-merge") {
      no_value();
      o.aot.merge = false;
    } else if (flag == "--mod-name") {
      o.aot.mod_name = value();
    } else if (flag == "--api") {
      std::string v = value();
      if (v != "packed" && v != "unpacked")
        throw ReplayError("--api: packed or unpacked, got " + v);
      o.aot.api = v == "packed" ? aot::Options::Api::kPacked : aot::Options::Api::kUnpacked;
    } else if (flag == "--interface") {
      std::string v = value();
      if (v != "packed" && v != "c") throw ReplayError("--interface: packed or c, got " + v);
      o.aot.interface =
          v == "packed" ? aot::Options::Interface::kPacked : aot::Options::Interface::kC;
    } else if (flag == "--storage-reuse") {
      no_value();
      o.aot.storage_reuse = true;
    } else if (flag == "--no-storage-reuse") {
      no_value();
      o.aot.storage_reuse = false;
    } else if (flag == "--max-fuse-depth") {
      const auto v = parse_u64(flag, value());
      if (v < 1 || v > (1u << 20)) throw ReplayError("--max-fuse-depth: 1 to 1048576");
      o.aot.max_fuse_depth = static_cast<int>(v);
    } else if (flag == "--check-num-args") {
      no_value();
      o.aot.check_num_args = true;
    } else if (flag == "--inject") {
      std::string v = value();
      auto bug = aot::parse_bug(v);
      if (!bug) throw ReplayError("unknown bug '" + v + "' (see `aotfuzz bugs`)");
      o.aot.bugs.enable(*bug);
    } else if (flag == "--cc") {
      std::string v = value();
      auto kind = oracle::parse_compiler_kind(v);
      if (!kind) throw ReplayError("--cc: tcc, gcc or clang, got " + v);
      o.compiler = *kind;
    } else if (flag == "--sanitize") {
      no_value();
      o.sanitize = true;
    } else if (flag == "--input-seed") {
      o.input_seed = parse_u64(flag, value());
    } else if (flag == "--ulp") {
      auto v = parse_u64(flag, value());
      if (v > 0xffffffffu) throw ReplayError("--ulp is too large");
      o.max_ulp = static_cast<std::uint32_t>(v);
    } else if (flag == "--no-run") {
      no_value();
      o.in_process_only = true;
    } else if (flag == "--structure") {
      no_value();
      o.check_structure = true;
    } else if (flag == "--no-structure") {
      no_value();
      o.check_structure = false;
    } else if (flag == "--determinism") {
      no_value();
      o.check_determinism = true;
    } else if (flag == "--no-determinism") {
      no_value();
      o.check_determinism = false;
    } else if (flag == "--sut") {
      std::string v = value();
      auto kind = oracle::parse_sut_kind(v);
      if (!kind) throw ReplayError("--sut: builtin or tvm, got " + v);
      o.sut.kind = *kind;
    } else if (flag == "--tvm-home") {
      o.sut.tvm_home = value();
    } else if (flag == "--in-process-time") {
      const std::string v = value();
      char* end = nullptr;
      const double seconds = std::strtod(v.c_str(), &end);
      if (end == v.c_str() || *end != '\0' || !(seconds > 0) || seconds > 1e6) {
        throw ReplayError("--in-process-time: seconds above 0, got " + v);
      }
      o.in_process_budget =
          std::chrono::milliseconds(static_cast<std::int64_t>(seconds * 1000));
    } else if (flag == "--debug-fault") {
      const std::string v = value();
      if (!aot::parse_debug_fault(v, o.aot)) {
        throw ReplayError("--debug-fault: PASS:crash or PASS:hang, got " + v);
      }
    } else {
      throw ReplayError("unknown flag '" + tokens[i] + "'");
    }
  }
  if (o.sut.kind == oracle::SutKind::kTvm && o.sut.tvm_home.empty()) {
    o.sut.tvm_home = oracle::tvm_home_from_env().value_or("");
  }
  if (o.aot.interface == aot::Options::Interface::kC && o.aot.api == aot::Options::Api::kPacked) {
    throw ReplayError("--interface c requires --api unpacked (as in TVM)");
  }
  if (o.sanitize && o.compiler == oracle::CompilerKind::kTcc) {
    throw ReplayError("--sanitize needs --cc gcc or --cc clang");
  }
  if (o.sanitize && !o.compiler) o.compiler = oracle::sanitizing_compiler();
  return o;
}

std::string format_replay_line(std::string_view flags, std::string_view signature) {
  std::string line(kReplayMarker);
  line += ' ';
  if (!flags.empty()) {
    line += flags;
    line += ' ';
  }
  line += "=> ";
  line += signature;
  return line;
}

std::vector<ReplayLine> parse_replay_lines(std::string_view text, const std::string& file) {
  std::vector<ReplayLine> out;
  int lineno = 0;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = trim(text.substr(pos, end - pos));
    ++lineno;
    pos = end + 1;
    if (line.empty()) continue;
    if (line.rfind("//", 0) != 0) break;  // the header ends at the first non-comment line
    if (line.rfind(kReplayMarker, 0) != 0) continue;
    const std::string where = file + ":" + std::to_string(lineno) + ": ";
    std::string_view rest = line.substr(kReplayMarker.size());
    auto arrow = rest.rfind("=>");
    if (arrow == std::string_view::npos) {
      throw ReplayError(where + "replay line needs '<flags> => <signature>'");
    }
    ReplayLine r;
    r.line = lineno;
    r.flags = std::string(trim(rest.substr(0, arrow)));
    r.expected = std::string(trim(rest.substr(arrow + 2)));
    if (r.expected.empty() || r.expected.find_first_of(" \t") != std::string::npos) {
      throw ReplayError(where + "replay line needs one signature after '=>'");
    }
    try {
      parse_case_flags(r.flags);
    } catch (const ReplayError& e) {
      throw ReplayError(where + e.what());
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<ReplayLine> default_replay_lines() {
  return {ReplayLine{0, "--merge", "pass"}, ReplayLine{0, "--no-merge", "pass"}};
}

bool signature_matches(std::string_view expected, std::string_view actual) {
  if (expected == actual) return true;
  return actual.size() > expected.size() && actual.substr(0, expected.size()) == expected &&
         actual[expected.size()] == ':';
}

bool FileReplay::ok() const {
  if (!error.empty() || runs.empty()) return false;
  return std::all_of(runs.begin(), runs.end(), [](const ReplayRun& r) { return r.ok; });
}

std::string FileReplay::failure_text() const {
  if (!error.empty()) return path + ": " + error + "\n";
  std::string out;
  for (const auto& r : runs) {
    if (r.ok) continue;
    out += path + (r.line.line > 0 ? ":" + std::to_string(r.line.line) : std::string()) +
           ": with '" + r.line.flags + "' expected " + r.line.expected + ", got " + r.actual +
           " (" + r.summary + ")\n";
    out +=
        "  replay: aotfuzz run " + path + (r.line.flags.empty() ? "" : " " + r.line.flags) + "\n";
  }
  return out;
}

FileReplay replay_text(std::string_view text, const std::string& path,
                       const ReplayOverride& override) {
  const auto t0 = Clock::now();
  FileReplay fr;
  fr.path = path;
  std::vector<ReplayLine> lines;
  try {
    lines = parse_replay_lines(text, path);
  } catch (const ReplayError& e) {
    fr.error = e.what();
    return fr;
  }
  if (lines.empty()) lines = default_replay_lines();
  std::optional<ir::Module> module;
  std::string load_error;
  try {
    ir::Module m = ir::parse_module(text, path);
    ir::verify(m);
    module = std::move(m);
  } catch (const ir::Error& e) {
    load_error = e.what();
  }
  for (const auto& line : lines) {
    const auto t1 = Clock::now();
    ReplayRun run;
    run.line = line;
    oracle::Verdict verdict;
    if (module) {
      oracle::CaseOptions options = parse_case_flags(line.flags);
      // An injected bug belongs to the builtin pipeline: such a line keeps it as its system.
      if (override.sut && !options.aot.bugs.any()) options.sut = *override.sut;
      if (override.no_run) options.in_process_only = true;
      verdict = oracle::run_case(*module, options).verdict;
    } else {
      verdict = {oracle::Stage::kAnnotated, oracle::InvalidInput{load_error}};
    }
    run.actual = oracle::signature(verdict);
    run.summary = oracle::summary(verdict);
    run.ok = signature_matches(line.expected, run.actual);
    run.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t1);
    fr.runs.push_back(std::move(run));
  }
  fr.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0);
  return fr;
}

FileReplay replay_file(const std::string& path, const ReplayOverride& override) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    FileReplay fr;
    fr.path = path;
    fr.error = "cannot open file";
    return fr;
  }
  std::ostringstream ss;
  ss << in.rdbuf();
  return replay_text(ss.str(), path, override);
}

std::vector<std::string> collect_relay_files(const std::vector<std::string>& paths) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    if (fs::is_directory(p, ec)) {
      std::vector<std::string> found;
      for (auto it = fs::recursive_directory_iterator(p, ec); !ec && it != fs::end(it);
           it.increment(ec)) {
        if (it->is_regular_file(ec) && it->path().extension() == ".relay") {
          found.push_back(it->path().string());
        }
      }
      if (ec) throw ReplayError(p + ": " + ec.message());
      std::sort(found.begin(), found.end());
      out.insert(out.end(), found.begin(), found.end());
    } else if (fs::exists(p, ec)) {
      out.push_back(p);
    } else {
      throw ReplayError(p + ": no such file or directory");
    }
  }
  return out;
}

std::vector<FileReplay> replay_files(const std::vector<std::string>& files, int jobs,
                                     const ReplayOverride& override) {
  std::vector<FileReplay> results(files.size());
  std::atomic<std::size_t> next{0};
  auto worker = [&] {
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) results[i] = replay_file(files[i], override);
  };
  const int n = std::max(1, std::min<int>(jobs, static_cast<int>(files.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return results;
}

}  // namespace aotfuzz::fuzz

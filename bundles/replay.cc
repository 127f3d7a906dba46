// Replay lines, flag strings and corpus replay.
#include "bundles/replay.h"

#include <algorithm>
#include <atomic>
#include <cctype>
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
#include "oracle/verdict.h"

namespace aotfuzz::bundles {
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

// A comment line that a reader takes for a replay line: after `//` and blanks, "replay" in any
// case, then blanks and a colon.
bool looks_like_replay_marker(std::string_view line) {
  std::string_view rest = trim(line.substr(2));
  if (rest.size() < 6) return false;
  for (std::size_t i = 0; i < 6; ++i) {
    if (std::tolower(static_cast<unsigned char>(rest[i])) != "replay"[i]) return false;
  }
  rest = trim(rest.substr(6));
  return !rest.empty() && rest.front() == ':';
}

}  // namespace

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
    const std::string where = file + ":" + std::to_string(lineno) + ": ";
    if (line.rfind(kReplayMarker, 0) != 0) {
      // `//replay:`, `// Replay:`, `// replay :`: meant as an expectation, and silently nothing
      // if skipped, so the file would pass on no check at all.
      if (looks_like_replay_marker(line)) {
        throw ReplayError(where + "'" + std::string(line.substr(0, line.find(':') + 1)) +
                          "' is not the marker '" + std::string(kReplayMarker) +
                          "' (exactly; a comment about replaying may not start with 'replay')");
      }
      continue;
    }
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
    const std::string kind = r.expected.substr(0, r.expected.find(':'));
    if (!oracle::parse_verdict_kind(kind)) {
      throw ReplayError(where + "'" + kind + "' is no verdict kind (docs/design.md, Verdicts)");
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

bool needs_program(std::string_view signature) {
  for (std::string_view kind :
       {"compile-error", "mismatch", "output-unwritten", "input-clobbered", "error-ignored",
        "workspace-oversized", "crash:run", "timeout:run", "known:codegen"}) {
    if (signature_matches(kind, signature)) return true;
  }
  return false;
}

namespace {

// The stage a signature names (`kind:stage[:...]`), when it names one.
std::optional<oracle::Stage> expected_stage(std::string_view signature) {
  const auto colon = signature.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  std::string_view rest = signature.substr(colon + 1);
  return oracle::parse_stage(rest.substr(0, rest.find(':')));
}

}  // namespace

bool signature_matches(std::string_view expected, std::string_view actual) {
  if (expected == actual) return true;
  return actual.size() > expected.size() && actual.substr(0, expected.size()) == expected &&
         actual[expected.size()] == ':';
}

bool FileReplay::ok() const {
  if (!error.empty() || runs.empty() || interrupted) return false;
  return std::all_of(runs.begin(), runs.end(), [](const ReplayRun& r) { return r.ok; });
}

bool FileReplay::failed() const {
  if (!error.empty()) return true;
  return std::any_of(runs.begin(), runs.end(),
                     [](const ReplayRun& r) { return !r.ok && !r.environment; });
}

bool FileReplay::cannot_run() const {
  return !failed() &&
         std::any_of(runs.begin(), runs.end(), [](const ReplayRun& r) { return r.environment; });
}

std::string FileReplay::failure_text() const {
  if (!error.empty()) {
    return (error.rfind(path + ":", 0) == 0 ? error : path + ": " + error) + "\n";
  }
  std::string out;
  for (const auto& r : runs) {
    if (r.ok) continue;
    if (r.environment) {
      out += path + (r.line.line > 0 ? ":" + std::to_string(r.line.line) : std::string()) +
             ": with '" + r.line.flags +
             "' could not run (the environment, not a finding): " + r.summary + "\n";
      continue;
    }
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
    if (override.stop != nullptr && override.stop->load()) {
      fr.interrupted = true;
      break;
    }
    const auto t1 = Clock::now();
    ReplayRun run;
    run.line = line;
    oracle::Verdict verdict;
    if (module) {
      oracle::CaseOptions options = parse_case_flags(line.flags);
      // An injected bug belongs to the builtin pipeline: such a line keeps it as its system.
      if (override.sut && !options.aot.bugs.any()) options.sut = override.sut;
      if (override.no_run) options.in_process_only = true;
      verdict = oracle::run_case(*module, options).verdict;
    } else {
      verdict = {oracle::Stage::kAnnotated, oracle::InvalidInput{load_error}};
    }
    run.actual = oracle::signature(verdict);
    run.summary = oracle::summary(verdict);
    run.ok = signature_matches(line.expected, run.actual);
    run.environment = !run.ok && verdict.kind() == oracle::VerdictKind::kToolchainError;
    if (!run.ok && override.no_run && verdict.kind() == oracle::VerdictKind::kPass) {
      if (needs_program(line.expected)) {
        run.ok = run.unchecked = true;
        run.summary = "not checked: --no-run compiles nothing, and " + line.expected +
                      " needs the compiled program";
      } else if (auto stage = expected_stage(line.expected); stage && *stage > verdict.stage) {
        // A system that stops early under --no-run (TVM partitions only) passes up to there.
        run.ok = run.unchecked = true;
        run.summary = "not checked: with --no-run the system stops at " +
                      std::string(oracle::stage_name(verdict.stage)) + ", before " + line.expected;
      }
    }
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
      // A gate with nothing to check passes nothing: an empty or mistyped corpus is bad input.
      if (found.empty()) throw ReplayError(p + ": no .relay files in this directory");
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
    for (std::size_t i; (i = next.fetch_add(1)) < files.size();) {
      if (override.stop != nullptr && override.stop->load()) {
        results[i].path = files[i];
        results[i].interrupted = true;
        continue;
      }
      results[i] = replay_file(files[i], override);
    }
  };
  const int n = std::max(1, std::min<int>(jobs, static_cast<int>(files.size())));
  std::vector<std::thread> threads;
  for (int t = 1; t < n; ++t) threads.emplace_back(worker);
  worker();
  for (auto& t : threads) t.join();
  return results;
}

std::optional<ReplayLine> first_finding_line(const std::vector<ReplayLine>& lines) {
  for (const auto& line : lines) {
    if (signature_matches("pass", line.expected) ||
        signature_matches("invalid-input", line.expected)) {
      continue;
    }
    return line;
  }
  return std::nullopt;
}

}  // namespace aotfuzz::bundles

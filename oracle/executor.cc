// The single-program and batched executors, and the batch program's assembly.
#include "oracle/executor.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string_view>
#include <unordered_map>

#include "aot/runtime_header.h"
#include "host/child.h"
#include "host/tempdir.h"
#include "ir/error.h"
#include "oracle/harness.h"
#include "oracle/runner/runner.h"

namespace aotfuzz::oracle {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::microseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
}

bool ends_with(const std::string& s, std::string_view suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

RawResult settled(Verdict v) {
  RawResult r;
  r.settled = std::move(v);
  return r;
}

// Writes `files` into `dir` and appends the paths of the .c ones to `c_files`; a file that
// cannot be written is the environment's failure (toolchain-error).
std::optional<Verdict> write_files(const std::filesystem::path& dir,
                                   const std::vector<std::pair<std::string, std::string>>& files,
                                   std::vector<std::string>& c_files) {
  for (const auto& [name, text] : files) {
    const std::string path = (dir / name).string();
    std::ofstream f(path, std::ios::binary);
    f << text;
    f.close();  // a full disk shows only when the buffer is written
    if (!f) {
      return Verdict{Stage::kRun,
                     ToolchainError{"cannot write " + path + " (is its file system full?)"}};
    }
    if (ends_with(name, ".c")) c_files.push_back(path);
  }
  return std::nullopt;
}

// The warnings oracle's compiler: gcc, else clang, else none.
std::optional<host::Toolchain> warnings_toolchain() {
  std::optional<host::Toolchain> tc = host::find_toolchain(host::CompilerKind::kGcc);
  return tc ? tc : host::find_toolchain(host::CompilerKind::kClang);
}

// PreparedCase::check_warnings, with `tc` from warnings_toolchain(). Never throws: a failure of
// the check itself is the environment's (toolchain-error).
std::optional<Verdict> warnings_verdict(const PreparedCase& c, const std::optional<host::Toolchain>& tc,
                                        const std::atomic<bool>* cancel) {
  if (!c.check_warnings || !c.warnings_as_errors || !tc) return std::nullopt;
  try {
    host::TempDir dir("aotfuzz-warnings");
    std::vector<std::string> c_files;
    // The generated files only: the harness's main.c is the oracle's code, and its system
    // headers would triple the check's time.
    if (auto v = write_files(dir.path(), c.sources, c_files)) return v;
    host::CompileOptions co;
    co.include_dirs = {dir.path().string()};
    co.include_dirs.insert(co.include_dirs.end(), c.include_dirs.begin(), c.include_dirs.end());
    co.defines = c.defines;
    co.syntax_only = true;
    co.cancel = cancel;
    host::CompileResult cr = compile(*tc, c_files, "", co);
    if (cr.run.cancelled) return std::nullopt;
    // The temporary directory's name differs from run to run; the file names do not.
    const std::string prefix = dir.path().string() + "/";
    for (auto at = cr.diagnostics.find(prefix); at != std::string::npos;
         at = cr.diagnostics.find(prefix, at)) {
      cr.diagnostics.erase(at, prefix.size());
    }
    return verdict_from_compile(cr, tc->kind);
  } catch (const std::exception& e) {
    return Verdict{Stage::kRun, ToolchainError{std::string("warnings check: ") + e.what()}};
  }
}

}  // namespace

// Objects of support sources, by everything that makes them: compiler, flags, the file and the
// headers beside it.
class SingleProgramExecutor::SupportObjects {
 public:
  // The objects of c's support .c files for compiler `tc` and options `co` (without the
  // program's own directory), compiled now where not yet; nullopt when one does not compile
  // alone (the caller compiles the program whole).
  std::optional<std::vector<std::string>> objects(const PreparedCase& c, const host::Toolchain& tc,
                                                  const host::CompileOptions& co) {
    std::string headers;
    for (const auto& [name, text] : c.support_sources) {
      if (!ends_with(name, ".c")) headers += name + '\0' + text + '\0';
    }
    std::string common = tc.path + '\0' + std::string(host::compiler_kind_name(tc.kind)) + '\0';
    for (const auto& d : co.include_dirs) common += "-I" + d + '\0';
    for (const auto& d : co.defines) common += "-D" + d + '\0';
    common += co.warnings_as_errors ? "W" : "w";
    common += co.sanitize ? "S" : "s";
    common += '\0' + headers;
    std::vector<std::string> out;
    for (const auto& [name, text] : c.support_sources) {
      if (!ends_with(name, ".c")) continue;
      const std::string key = common + name + '\0' + text;
      auto it = objects_.find(key);
      // A file that did not compile alone is not tried again (empty: none).
      if (it == objects_.end()) it = objects_.emplace(key, compile_one(c, tc, co, name)).first;
      if (it->second.empty()) return std::nullopt;
      out.push_back(it->second);
    }
    return out;
  }

  std::size_t size() const {
    return static_cast<std::size_t>(std::count_if(
        objects_.begin(), objects_.end(), [](const auto& o) { return !o.second.empty(); }));
  }

 private:
  // The object's path, or empty when the file does not compile alone.
  std::string compile_one(const PreparedCase& c, const host::Toolchain& tc,
                          const host::CompileOptions& co, const std::string& name) try {
    if (!dir_) dir_.emplace("aotfuzz-support");
    // Each object in a directory of its own, with the support headers beside its source.
    const std::filesystem::path at = dir_->file(std::to_string(objects_.size()));
    std::error_code ec;
    std::filesystem::create_directories(at, ec);
    if (ec) return {};
    std::vector<std::string> ignored;
    std::vector<std::pair<std::string, std::string>> files;
    for (const auto& f : c.support_sources) {
      if (!ends_with(f.first, ".c") || f.first == name) files.push_back(f);
    }
    if (write_files(at, files, ignored)) return {};
    host::CompileOptions one = co;
    one.include_dirs.insert(one.include_dirs.begin(), at.string());
    one.object_only = true;
    const std::string object = (at / (name + ".o")).string();
    const host::CompileResult cr = compile(tc, {(at / name).string()}, object, one);
    if (cr.status != host::CompileStatus::kOk) return {};
    return object;
  } catch (const std::exception&) {
    // No temporary directory: the programs are compiled whole, as without objects.
    return {};
  }

  std::optional<host::TempDir> dir_;
  std::unordered_map<std::string, std::string> objects_;
};

namespace {

RawResult run_single(const PreparedCase& c, SingleProgramExecutor::SupportObjects* support) {
  RawResult out;
  std::optional<host::Toolchain> tc = c.toolchain;
  if (!tc) {
    auto found = c.compiler ? host::locate_toolchain(*c.compiler) : host::locate_default_toolchain();
    if (auto* why = std::get_if<std::string>(&found)) {
      return settled({Stage::kRun, ToolchainError{"no C compiler found: " + *why}});
    }
    tc = std::get<host::Toolchain>(std::move(found));
  }
  // gcc and clang compile the program itself with -Wall -Wextra -Werror.
  if (tc->kind == host::CompilerKind::kTcc && c.check_warnings) {
    if (auto v = warnings_verdict(c, warnings_toolchain(), nullptr)) return settled(std::move(*v));
  }
  host::TempDir dir("aotfuzz-case");
  if (c.keep_files) dir.keep();
  out.work_dir = dir.path().string();
  std::vector<std::string> c_files;
  if (auto v = write_files(dir.path(), c.program_files(), c_files)) return settled(std::move(*v));
  host::CompileOptions co;
  co.include_dirs = c.include_dirs;
  co.defines = c.defines;
  co.warnings_as_errors = c.warnings_as_errors;
  co.sanitize = c.sanitize;
  const std::string exe = dir.file("case").string();
  auto t1 = Clock::now();
  std::optional<std::vector<std::string>> objects;
  if (support != nullptr && !c.support_sources.empty() && !c.keep_files) {
    objects = support->objects(c, *tc, co);
  }
  if (objects) {
    std::vector<std::string> own;
    for (const auto& f : c_files) {
      const std::string name = std::filesystem::path(f).filename().string();
      const bool shared = std::any_of(c.support_sources.begin(), c.support_sources.end(),
                                      [&](const auto& s) { return s.first == name; });
      if (!shared) own.push_back(f);
    }
    own.insert(own.end(), objects->begin(), objects->end());
    c_files = std::move(own);
  }
  co.include_dirs.insert(co.include_dirs.begin(), dir.path().string());
  if (c.syntax_check_first && tc->kind != host::CompilerKind::kTcc) {
    std::vector<std::string> own;
    for (const auto& f : c_files) {
      if (ends_with(f, ".c")) own.push_back(f);
    }
    host::CompileOptions check = co;
    check.syntax_only = true;
    const host::CompileResult checked = compile(*tc, own, "", check);
    if (checked.status == host::CompileStatus::kCompileError) {
      out.compile_time = since(t1);
      out.settled = verdict_from_compile(checked, tc->kind);
      return out;
    }
  }
  host::CompileResult cr = compile(*tc, c_files, exe, co);
  out.compile_time = since(t1);
  if (auto v = verdict_from_compile(cr, tc->kind)) {
    out.settled = *v;
    return out;
  }
  host::RunLimits limits = c.limits;
  limits.working_dir = dir.path().string();
  auto t2 = Clock::now();
  out.run = host::run_process({exe}, limits);
  out.run_time = since(t2);
  return out;
}

// --- batch program assembly ---

bool ident_start(char ch) {
  return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || ch == '_';
}
bool ident_char(char ch) { return ident_start(ch) || (ch >= '0' && ch <= '9'); }

bool renamed(std::string_view id) {
  return id.rfind("tvmgen_", 0) == 0 || id.rfind("TVMGEN_", 0) == 0 ||
         id.rfind(kCasePrefix, 0) == 0 || id == "tvmgen";
}

// Prefixes the case's own identifiers; comments, string and character literals are copied.
void append_renamed(std::string& out, std::string_view text, const std::string& prefix) {
  std::size_t i = 0;
  const std::size_t n = text.size();
  while (i < n) {
    const char ch = text[i];
    if (ch == '/' && i + 1 < n && text[i + 1] == '*') {
      const std::size_t end = text.find("*/", i + 2);
      const std::size_t stop = end == std::string_view::npos ? n : end + 2;
      out.append(text.substr(i, stop - i));
      i = stop;
    } else if (ch == '/' && i + 1 < n && text[i + 1] == '/') {
      const std::size_t end = text.find('\n', i);
      const std::size_t stop = end == std::string_view::npos ? n : end;
      out.append(text.substr(i, stop - i));
      i = stop;
    } else if (ch == '"' || ch == '\'') {
      std::size_t j = i + 1;
      while (j < n && text[j] != ch && text[j] != '\n') j += text[j] == '\\' ? 2 : 1;
      j = std::min(n, j + 1);
      out.append(text.substr(i, j - i));
      i = j;
    } else if (ch >= '0' && ch <= '9') {
      // A preprocessing number (0x1fULL, 1e5f): letters in it are not identifiers.
      std::size_t j = i + 1;
      while (j < n && (ident_char(text[j]) || text[j] == '.')) ++j;
      out.append(text.substr(i, j - i));
      i = j;
    } else if (ident_start(ch)) {
      std::size_t j = i + 1;
      while (j < n && ident_char(text[j])) ++j;
      const std::string_view id = text.substr(i, j - i);
      if (renamed(id)) out += prefix;
      out.append(id);
      i = j;
    } else {
      out.push_back(ch);
      ++i;
    }
  }
}

// The `#include <...>` lines of `text`.
std::set<std::string, std::less<>> system_includes(std::string_view text) {
  std::set<std::string, std::less<>> out;
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    const std::string_view line = text.substr(start, end - start);
    if (line.rfind("#include <", 0) == 0 && line.back() == '>') out.emplace(line);
    start = end + 1;
  }
  return out;
}

// `text` with each `#include "name"` of a generated file replaced by that file (once; the runtime
// header, already at the top of the program, by nothing), and without the `#include <...>` lines
// the program's start already has (`at_top`): tcc would look each one up again in every include
// directory before finding it guarded.
void inline_includes(std::string& out, const std::string& text, const PreparedCase& c,
                     std::set<std::string>& done,
                     const std::set<std::string, std::less<>>& at_top) {
  std::size_t start = 0;
  while (start < text.size()) {
    std::size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string_view line(text.data() + start, end - start);
    std::string_view name;
    if (line.rfind("#include \"", 0) == 0 && line.size() > 11 && line.back() == '"') {
      name = line.substr(10, line.size() - 11);
    }
    if (!name.empty()) {
      if (name != aot::kRuntimeHeaderName && !done.count(std::string(name))) {
        done.insert(std::string(name));
        for (const auto& [file, content] : c.sources) {
          if (file == name) inline_includes(out, content, c, done, at_top);
        }
      }
    } else if (!at_top.contains(line)) {
      out.append(line);
      out.push_back('\n');
    }
    start = end + 1;
  }
}

std::string replace_runtime_include(std::string runtime) {
  const std::string include = "#include \"" + std::string(aot::kRuntimeHeaderName) + "\"";
  const auto at = runtime.find(include);
  if (at != std::string::npos) runtime.replace(at, include.size(), aot::runtime_header_text());
  return runtime;
}

}  // namespace

std::vector<std::pair<std::string, std::string>> PreparedCase::program_files() const {
  auto files = sources;
  files.insert(files.end(), support_sources.begin(), support_sources.end());
  files.emplace_back(
      "main.c", main_c.empty()
                    ? harness_main_c(mod_name, header_name, harness_inputs_c(inputs) + harness_case)
                    : main_c);
  return files;
}

SingleProgramExecutor::SingleProgramExecutor(bool keep_support_objects)
    : support_(keep_support_objects ? std::make_unique<SupportObjects>() : nullptr) {}

SingleProgramExecutor::~SingleProgramExecutor() = default;

std::size_t SingleProgramExecutor::support_objects() const {
  return support_ ? support_->size() : 0;
}

std::vector<RawResult> SingleProgramExecutor::run(std::span<const PreparedCase> cases) {
  std::vector<RawResult> out;
  out.reserve(cases.size());
  for (const auto& c : cases) {
    try {
      out.push_back(run_single(c, support_.get()));
    } catch (const ir::Error& e) {
      out.push_back(settled({Stage::kRun, ToolchainError{e.what()}}));
    } catch (const std::exception& e) {
      out.push_back(
          settled({Stage::kRun, ToolchainError{std::string("harness failure: ") + e.what()}}));
    }
  }
  return out;
}

namespace {

// The cases of a batch program (each renamed c<k>_), the table of their entries and
// `aotfuzz_batch_run`, which runs one through `run` (the runtime's aotfuzz_harness_run, or its
// shared entry when the runtime is compiled apart). `at_top`: the system includes the program's
// start covers.
void append_cases(std::string& out, std::span<const PreparedCase* const> cases,
                  const std::set<std::string, std::less<>>& at_top, std::string_view run) {
  for (std::size_t k = 0; k < cases.size(); ++k) {
    const PreparedCase& c = *cases[k];
    std::string text;
    std::set<std::string> done;
    for (const auto& [file, content] : c.sources) {
      if (ends_with(file, ".c")) inline_includes(text, content, c, done, at_top);
    }
    // The model's header once more: its include guard must hold, as in a user's program that
    // includes it from several files (harness_main_c includes it twice too).
    for (const auto& [file, content] : c.sources) {
      if (file != c.header_name) continue;
      std::set<std::string> again;
      inline_includes(text, content, c, again, at_top);
    }
    text += harness_inputs_stub_c(c.inputs.size());
    text += c.harness_case;
    out += "\n/* case " + std::to_string(k) + ": module \"" + c.mod_name + "\" */\n";
    append_renamed(out, text, "c" + std::to_string(k) + "_");
  }
  const std::string n = std::to_string(cases.size());
  out += "\nstatic const struct aotfuzz_harness_case* const aotfuzz_batch_cases[" + n + "] = {\n";
  for (std::size_t k = 0; k < cases.size(); ++k) {
    out += "  &c" + std::to_string(k) + "_" + std::string(kCasePrefix) + "entry,\n";
  }
  out += "};\n\nint aotfuzz_batch_run(int k, const uint8_t* const* inputs);\n"
         "int aotfuzz_batch_run(int k, const uint8_t* const* inputs) {\n  if (k < 0 || k >= " +
         n + " || inputs == NULL) return 88;\n  return " + std::string(run) +
         "(aotfuzz_batch_cases[k], inputs);\n}\n";
}

std::string batch_header(std::size_t n) {
  return "/* A batch of " + std::to_string(n) +
         " aotfuzz cases: each case's names carry the prefix c<k>_. */\n";
}

}  // namespace

std::string batch_program_c(std::span<const PreparedCase* const> cases) {
  static const std::string runtime = replace_runtime_include(harness_runtime_c());
  static const auto at_top = system_includes(runtime);
  std::string out = batch_header(cases.size());
  out += runtime;
  append_cases(out, cases, at_top, "aotfuzz_harness_run");
  return out;
}

std::string batch_runtime_c() { return replace_runtime_include(harness_shared_runtime_c()); }

std::string batch_cases_c(std::span<const PreparedCase* const> cases) {
  // What the prelude declares of these headers is all the generated C takes from them.
  static const auto at_top = system_includes(
      "#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <string.h>\n");
  std::string out = batch_header(cases.size());
  out += harness_case_prelude_c();
  append_cases(out, cases, at_top, harness_shared_entry());
  return out;
}

std::string runner_path() {
#ifdef AOTFUZZ_RUNNER_BUILD_PATH
  return host::companion_program("AOTFUZZ_RUNNER", "aotfuzz-runner", AOTFUZZ_RUNNER_BUILD_PATH);
#else
  return host::companion_program("AOTFUZZ_RUNNER", "aotfuzz-runner", nullptr);
#endif
}

bool batched_execution_available(host::CompilerKind compiler) {
  if (runner_path().empty()) return false;
  if (compiler == host::CompilerKind::kTcc) return runner::have_libtcc();
  return host::find_in_path(host::compiler_kind_name(compiler)).has_value();
}

// --- the runner process ---

namespace {

// One runner child (host::Child: its stdin and stdout our socket); `env` is added to its
// environment.
class RunnerProcess {
 public:
  RunnerProcess(std::string path, std::vector<std::string> env)
      : path_(std::move(path)), env_(std::move(env)) {}

  bool running() const { return child_.running(); }

  bool start() {
    if (!child_.start(host::ChildSpec{.argv = {path_}, .extra_env = env_})) return false;
    ++starts_;
    return true;
  }

  void stop() { child_.kill(); }

  // The batch's result; nullopt when the runner died, hung past `deadline_ms` or answered
  // garbage, or when `cancel` was set before it answered (`*cancelled` then says so); the
  // runner is stopped in each of these cases.
  std::optional<runner::BatchResult> call(const runner::BatchRequest& request, long deadline_ms,
                                          const std::atomic<bool>* cancel, bool* cancelled) {
    if (!running() && !start()) return std::nullopt;
    const auto deadline = Clock::now() + std::chrono::milliseconds(deadline_ms);
    if (child_.write(runner::frame(runner::encode(request)), deadline) != host::ChildIo::kOk) {
      stop();
      return std::nullopt;
    }
    // The runner answers with one frame when the whole batch is done: a stop request is seen
    // while it compiles and runs.
    const host::ChildIo ready = child_.wait_readable(deadline, cancel);
    if (ready == host::ChildIo::kCancelled) *cancelled = true;
    std::string head, payload;
    if (ready != host::ChildIo::kOk ||
        child_.read_exact(head, 4, deadline) != host::ChildIo::kOk ||
        runner::frame_length(head) > (std::size_t{1} << 31) ||
        child_.read_exact(payload, runner::frame_length(head), deadline) != host::ChildIo::kOk) {
      stop();
      return std::nullopt;
    }
    auto result = runner::decode_result(payload);
    if (!result) stop();
    return result;
  }

  int starts() const { return starts_; }

 private:
  std::string path_;
  std::vector<std::string> env_;
  host::Child child_;
  int starts_ = 0;
};

host::ExitKind exit_kind(runner::ChildEnd end) {
  switch (end) {
    case runner::ChildEnd::kExited:
      return host::ExitKind::kExited;
    case runner::ChildEnd::kSignaled:
      return host::ExitKind::kSignaled;
    case runner::ChildEnd::kTimedOut:
      return host::ExitKind::kTimedOut;
    case runner::ChildEnd::kStartFailed:
      break;
  }
  return host::ExitKind::kStartFailed;
}

RawResult raw_from_outcome(runner::CaseOutcome&& o) {
  RawResult r;
  r.run.kind = exit_kind(o.end);
  r.run.exit_code = o.exit_code;
  r.run.signal = o.signal;
  r.run.stdout_text = std::move(o.stdout_text);
  r.run.stderr_text = std::move(o.stderr_text);
  r.run.stdout_truncated = o.flood;
  r.run.stderr_truncated = o.stderr_truncated;
  r.run.elapsed = std::chrono::microseconds(o.elapsed_us);
  r.run.message = std::move(o.message);
  r.flood = o.flood;
  r.run_time = r.run.elapsed;
  return r;
}

// A batch program inlines every generated file, so an include its compiler cannot find is a
// system header this machine lacks (tcc: "include file 'x' not found"; gcc: "x: No such file or
// directory"; clang: "'x' file not found"): the environment, not the code under test.
bool missing_header(std::string_view diagnostics) {
  return (diagnostics.find("include file '") != std::string_view::npos &&
          diagnostics.find("' not found") != std::string_view::npos) ||
         (diagnostics.find("fatal error:") != std::string_view::npos &&
          (diagnostics.find("No such file or directory") != std::string_view::npos ||
           diagnostics.find("file not found") != std::string_view::npos));
}

std::string header_missing(std::string_view diagnostics) {
  std::string_view line = diagnostics;
  for (std::string_view key : {"include file '", "fatal error:"}) {
    if (const auto at = diagnostics.find(key); at != std::string_view::npos) {
      line = diagnostics.substr(at, diagnostics.find('\n', at) - at);
      break;
    }
  }
  return "a system header the generated C includes is missing here (" + std::string(line) +
         "): install the C library's headers, or ship them (docs/libfuzzer.md)";
}

runner::CaseRequest case_request(const PreparedCase& c, int index) {
  runner::CaseRequest q;
  q.index = index;
  for (const auto& in : c.inputs) q.inputs.push_back(in.bytes);
  q.timeout_ms = static_cast<std::uint64_t>(std::max<std::int64_t>(1, c.limits.timeout.count()));
  q.cpu_seconds = c.limits.cpu_seconds;
  q.address_space = c.limits.address_space;
  q.file_size = c.limits.file_size;
  q.output_cap = c.limits.output_cap;
  return q;
}

}  // namespace

class BatchedExecutor::Impl {
 public:
  explicit Impl(BatchOptions o) : opt_(std::move(o)) {
    if (opt_.runner.empty()) opt_.runner = runner_path();
  }

  std::vector<RawResult> run(std::span<const PreparedCase> cases) {
    std::vector<RawResult> out(cases.size());
    if (opt_.compiler == host::CompilerKind::kTcc) {
      std::vector<std::size_t> unsettled;
      for (std::size_t i = 0; i < cases.size(); ++i) {
        if (!cases[i].check_warnings) {
          unsettled.push_back(i);
          continue;
        }
        // Looked up once: a lookup runs the compiler.
        if (!lint_toolchain_) lint_toolchain_ = warnings_toolchain();
        if (auto v = warnings_verdict(cases[i], *lint_toolchain_, opt_.stop)) {
          out[i] = settled(std::move(*v));
        } else {
          unsettled.push_back(i);
        }
      }
      if (unsettled.size() != cases.size()) {
        std::vector<PreparedCase> rest;
        rest.reserve(unsettled.size());
        for (std::size_t i : unsettled) rest.push_back(cases[i]);
        auto results = run_unwarned(rest);
        for (std::size_t k = 0; k < unsettled.size(); ++k) out[unsettled[k]] = std::move(results[k]);
        return out;
      }
    }
    return run_unwarned(cases);
  }

  int starts() const { return runner_ ? runner_->starts() : 0; }
  int whole_program_retries() const { return whole_program_retries_; }

 private:
  std::vector<RawResult> run_unwarned(std::span<const PreparedCase> cases) {
    std::vector<RawResult> out(cases.size());
    std::size_t begin = 0;
    while (begin < cases.size()) {
      // K adaptive: cases until the program's source would pass the size bound.
      std::size_t bytes = 0, end = begin;
      while (end < cases.size()) {
        std::size_t size = cases[end].harness_case.size();
        for (const auto& f : cases[end].sources) size += f.second.size();
        if (end > begin && bytes + size > opt_.max_source_bytes) break;
        bytes += size;
        ++end;
      }
      if (opt_.stop != nullptr && opt_.stop->load()) {
        for (std::size_t i = begin; i < cases.size(); ++i) out[i].cancelled = true;
        break;
      }
      std::vector<const PreparedCase*> group;
      for (std::size_t i = begin; i < end; ++i) group.push_back(&cases[i]);
      run_group(group, std::span<RawResult>(out.data() + begin, end - begin), true,
                opt_.shared_runtime);
      begin = end;
    }
    return out;
  }

  // Runs `group` as one program; on a compile failure or a dead runner with more than one case,
  // each case alone (when `retry`). `shared`: the cases compiled against the runner's runtime
  // (tcc), and on a compile failure the whole program before anything else.
  void run_group(const std::vector<const PreparedCase*>& group, std::span<RawResult> out,
                 bool retry, bool shared) {
    runner::BatchRequest request;
    std::optional<host::TempDir> dir;
    std::chrono::microseconds compile_time{0};
    std::optional<Verdict> compile_failure;
    shared = shared && opt_.compiler == host::CompilerKind::kTcc;
    const std::string program = shared ? batch_cases_c(group) : batch_program_c(group);
    request.cases_per_child = opt_.cases_per_child;
    if (opt_.compiler == host::CompilerKind::kTcc) {
      request.mode = runner::BatchRequest::Mode::kTccSource;
      request.program = program;
      request.tcc_options = "-std=c99 -Wall -Werror -DAOTFUZZ_TRACE";
      if (shared) {
        if (shared_runtime_.empty()) shared_runtime_ = batch_runtime_c();
        request.runtime = shared_runtime_;
        request.runtime_symbols = harness_runtime_symbols();
      }
    } else {
      // gcc/clang: the compiler's command line builds a shared object the runner loads.
      if (!opt_.toolchain) {
        auto found = host::locate_toolchain(opt_.compiler);
        if (auto* why = std::get_if<std::string>(&found)) {
          for (auto& r : out) {
            r = settled({Stage::kRun, ToolchainError{"no C compiler found: " + *why}});
          }
          return;
        }
        opt_.toolchain = std::get<host::Toolchain>(std::move(found));
      }
      try {
        dir.emplace("aotfuzz-batch");
        const std::string src = dir->file("batch.c").string();
        std::ofstream(src, std::ios::binary) << program;
        host::CompileOptions co;
        co.defines = {"AOTFUZZ_TRACE"};
        co.extra_flags = {"-shared", "-fPIC"};
        co.cancel = opt_.stop;
        const std::string so = dir->file("batch.so").string();
        const auto t0 = Clock::now();
        host::CompileResult cr = compile(*opt_.toolchain, {src}, so, co);
        compile_time = since(t0);
        if (cr.run.cancelled) {
          for (auto& r : out) r.cancelled = true;
          return;
        }
        compile_failure = verdict_from_compile(cr, opt_.compiler);
        if (compile_failure && missing_header(cr.diagnostics)) {
          compile_failure = Verdict{Stage::kRun, ToolchainError{header_missing(cr.diagnostics)}};
        }
        request.mode = runner::BatchRequest::Mode::kSharedObject;
        request.program = so;
      } catch (const std::exception& e) {
        compile_failure = Verdict{Stage::kRun, ToolchainError{std::string("batch: ") + e.what()}};
      }
    }
    std::optional<runner::BatchResult> result;
    if (!compile_failure) {
      long deadline_ms = 120'000;
      for (std::size_t k = 0; k < group.size(); ++k) {
        request.cases.push_back(case_request(*group[k], static_cast<int>(k)));
        deadline_ms += static_cast<long>(request.cases.back().timeout_ms) + 1000;
      }
      {
        if (!runner_) {
          if (opt_.runner.empty()) {
            for (auto& r : out) {
              r = settled({Stage::kRun, ToolchainError{"no aotfuzz-runner executable found"}});
            }
            return;
          }
          runner_ = std::make_unique<RunnerProcess>(opt_.runner, opt_.runner_env);
        }
        bool cancelled = false;
        result = runner_->call(request, deadline_ms, opt_.stop, &cancelled);
        if (cancelled) {
          for (auto& r : out) r.cancelled = true;
          return;
        }
      }
      if (result && result->compile == runner::BatchResult::Compile::kOk &&
          result->cases.size() != group.size()) {
        result.reset();
      }
      if (result && result->compile != runner::BatchResult::Compile::kOk) {
        compile_failure =
            result->compile != runner::BatchResult::Compile::kCompileError
                ? Verdict{Stage::kCodegen, ToolchainError{"libtcc: " + result->diagnostics}}
            : missing_header(result->diagnostics)
                ? Verdict{Stage::kRun, ToolchainError{header_missing(result->diagnostics)}}
                : Verdict{Stage::kCodegen, CompileError{"tcc", result->diagnostics, ""}};
        compile_time = std::chrono::microseconds(result->compile_us);
      }
    }
    if (shared && compile_failure) {
      ++whole_program_retries_;
      run_group(group, out, retry, false);
      return;
    }
    if (compile_failure || !result) {
      if (retry && group.size() > 1) {
        for (std::size_t k = 0; k < group.size(); ++k) {
          if (opt_.stop != nullptr && opt_.stop->load()) {
            for (std::size_t i = k; i < group.size(); ++i) out[i].cancelled = true;
            return;
          }
          run_group({group[k]}, out.subspan(k, 1), false, shared);
        }
        return;
      }
      for (auto& r : out) {
        r = compile_failure
                ? settled(*compile_failure)
                : settled({Stage::kRun, ToolchainError{"the runner died or hung on this case"}});
        r.compile_time = compile_time;
      }
      return;
    }
    // The runner's figure is libtcc's compile (tcc), or loading the shared object on top of the
    // compiler run timed above (gcc/clang).
    compile_time += std::chrono::microseconds(result->compile_us);
    const auto share = compile_time / static_cast<long>(group.size());
    for (std::size_t k = 0; k < group.size(); ++k) {
      out[k] = raw_from_outcome(std::move(result->cases[k]));
      out[k].compile_time = share;
    }
  }

  BatchOptions opt_;
  std::unique_ptr<RunnerProcess> runner_;
  std::string shared_runtime_;
  int whole_program_retries_ = 0;
  std::optional<std::optional<host::Toolchain>> lint_toolchain_;
};

BatchedExecutor::BatchedExecutor(BatchOptions options)
    : impl_(std::make_unique<Impl>(std::move(options))) {}
BatchedExecutor::~BatchedExecutor() = default;

std::vector<RawResult> BatchedExecutor::run(std::span<const PreparedCase> cases) {
  return impl_->run(cases);
}

int BatchedExecutor::runner_starts() const { return impl_->starts(); }

int BatchedExecutor::whole_program_retries() const { return impl_->whole_program_retries(); }

}  // namespace aotfuzz::oracle

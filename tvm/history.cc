// TVM's history as trees and builds (tvm/history.h).
#include "tvm/history.h"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <sstream>

#include "tvm/driver.h"

extern char** environ;

namespace aotfuzz::tvm {
namespace {

namespace fs = std::filesystem;

std::string trim_newlines(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.pop_back();
  return s;
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// git gets the minimal environment plus where its configuration lives: a user's safe.directory
// entry (repositories owned by someone else) is read from ~/.gitconfig.
host::RunLimits git_limits() {
  host::RunLimits l;
  l.timeout = std::chrono::minutes(30);  // `git archive` of TVM on a slow disk
  l.address_space = 0;
  l.file_size = 0;  // an archive of TVM with its history's largest files is over 64 MiB
  l.processes = 0;
  l.output_cap = std::size_t{64} << 20;  // rev-list over years of history
  for (const char* name : {"HOME", "XDG_CONFIG_HOME"}) {
    if (const char* v = std::getenv(name); v != nullptr && *v != '\0') l.env[name] = v;
  }
  return l;
}

// The whole environment of this process, for the build script.
std::map<std::string, std::string> whole_environment() {
  std::map<std::string, std::string> env;
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string kv = *e;
    const std::size_t eq = kv.find('=');
    if (eq != std::string::npos && eq > 0) env[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  return env;
}

std::string first_error_line(const host::RunResult& r) {
  const auto lines = lines_of(r.stderr_text);
  return lines.empty() ? r.describe() : lines.front();
}

bool same_directory(const fs::path& a, const fs::path& b) {
  std::error_code ec;
  return fs::equivalent(a, b, ec) && !ec;
}

void unpack(const fs::path& tar_file, const fs::path& into) {
  std::error_code ec;
  fs::create_directories(into, ec);
  if (ec) throw HistoryError("cannot create " + into.string() + ": " + ec.message());
  host::RunLimits l = git_limits();
  const host::RunResult r =
      host::run_process({"tar", "-xf", tar_file.string(), "-C", into.string()}, l);
  fs::remove(tar_file, ec);
  if (!r.exited_ok()) {
    throw HistoryError("tar -xf " + tar_file.string() + ": " + first_error_line(r));
  }
}

// A known TVM submodule: its path in TVM, the names its mirror may have, and whether the CPU
// build of scripts/tvm/build.sh (no LLVM, USE_LIBBACKTRACE OFF, no VTA, no CUDA) compiles it.
struct KnownSubmodule {
  const char* path;
  std::vector<const char*> names;
  bool needed;
};

const std::vector<KnownSubmodule>& known_submodules() {
  static const std::vector<KnownSubmodule> table = {
      {"3rdparty/dlpack", {"dmlc+dlpack", "dlpack"}, true},
      {"3rdparty/dmlc-core", {"dmlc+dmlc-core", "dmlc-core"}, true},
      {"3rdparty/rang", {"agauniyal+rang", "rang"}, true},
      {"3rdparty/libbacktrace", {"tlc-pack+libbacktrace", "libbacktrace"}, false},
      {"3rdparty/vta-hw",
       {"apache+tvm-vta", "apache+incubator-tvm-vta", "tvm-vta", "incubator-tvm-vta", "vta-hw"},
       false},
      {"3rdparty/cutlass", {"NVIDIA+cutlass", "cutlass"}, false},
  };
  return table;
}

std::vector<std::string> mirror_names(const std::string& path) {
  for (const auto& k : known_submodules()) {
    if (path == k.path) return {k.names.begin(), k.names.end()};
  }
  return {fs::path(path).filename().string()};
}

bool looks_like_repository(const fs::path& dir) {
  std::error_code ec;
  return fs::is_regular_file(dir / "HEAD", ec) || fs::exists(dir / ".git", ec);
}

}  // namespace

GitRepo::GitRepo(const fs::path& dir) {
  std::error_code ec;
  dir_ = fs::absolute(dir, ec).lexically_normal();
  if (!fs::is_directory(dir_, ec)) throw HistoryInputError(dir.string() + ": no such directory");
  const host::RunResult r = git({"rev-parse", "--absolute-git-dir"});
  if (r.kind == host::ExitKind::kStartFailed) {
    throw HistoryError("git cannot be started: " + r.message);
  }
  if (!r.exited_ok()) {
    throw HistoryInputError(dir.string() + ": not a git repository (" + first_error_line(r) + ")");
  }
  git_dir_ = trim_newlines(r.stdout_text);
  // A folder inside some other repository is not the TVM repository the user meant.
  if (same_directory(git_dir_, dir_)) return;
  const host::RunResult top = git({"rev-parse", "--show-toplevel"});
  if (!top.exited_ok() || !same_directory(trim_newlines(top.stdout_text), dir_)) {
    throw HistoryInputError(dir.string() + ": not the top of a git repository");
  }
}

host::RunResult GitRepo::git(const std::vector<std::string>& args) const {
  std::vector<std::string> argv = {"git", "-C", dir_.string()};
  argv.insert(argv.end(), args.begin(), args.end());
  return host::run_process(argv, git_limits());
}

std::string GitRepo::git_out(const std::vector<std::string>& args) const {
  const host::RunResult r = git(args);
  if (!r.exited_ok()) {
    std::string command = "git";
    for (const auto& a : args) command += " " + a;
    throw HistoryError(command + " in " + dir_.string() + ": " + first_error_line(r));
  }
  return r.stdout_text;
}

std::string GitRepo::resolve(const std::string& rev) const {
  const host::RunResult r =
      git({"rev-parse", "--verify", "--quiet", "--end-of-options", rev + "^{commit}"});
  if (!r.exited_ok()) {
    throw HistoryInputError("unknown revision '" + rev + "' in " + dir_.string());
  }
  return trim_newlines(r.stdout_text);
}

bool GitRepo::is_ancestor(const std::string& a, const std::string& b) const {
  const host::RunResult r = git({"merge-base", "--is-ancestor", a, b});
  if (r.kind == host::ExitKind::kExited && (r.exit_code == 0 || r.exit_code == 1)) {
    return r.exit_code == 0;
  }
  throw HistoryError("git merge-base --is-ancestor in " + dir_.string() + ": " +
                     first_error_line(r));
}

std::vector<std::string> GitRepo::ancestry_path(const std::string& older, const std::string& newer,
                                                const std::vector<std::string>& paths) const {
  std::vector<std::string> args = {"rev-list", "--reverse", "--ancestry-path",
                                   older + ".." + newer};
  if (!paths.empty()) {
    args.push_back("--");
    args.insert(args.end(), paths.begin(), paths.end());
  }
  return lines_of(git_out(args));
}

std::string GitRepo::subject(const std::string& commit) const {
  return trim_newlines(git_out({"log", "-1", "--format=%s", commit}));
}

std::vector<Gitlink> GitRepo::gitlinks(const std::string& commit, const std::string& dir) const {
  std::vector<Gitlink> out;
  // "<mode> <type> <object>\t<path>"; a submodule's type is "commit".
  for (const auto& line : lines_of(git_out({"ls-tree", commit, "--", dir + "/"}))) {
    const std::size_t tab = line.find('\t');
    std::istringstream fields(line.substr(0, tab));
    std::string mode, type, object;
    fields >> mode >> type >> object;
    if (tab != std::string::npos && type == "commit") out.push_back({line.substr(tab + 1), object});
  }
  return out;
}

void GitRepo::extract(const std::string& commit, const fs::path& scratch,
                      const fs::path& into) const {
  const host::RunResult r = git({"archive", "--format=tar", "-o", scratch.string(), commit});
  if (!r.exited_ok()) {
    throw HistoryError("git archive " + commit + " in " + dir_.string() + ": " +
                       first_error_line(r));
  }
  unpack(scratch, into);
}

SubmoduleMirrors::SubmoduleMirrors(std::vector<fs::path> roots,
                                   std::map<std::string, fs::path> explicit_dirs,
                                   fs::path superproject_git_dir)
    : roots_(std::move(roots)),
      explicit_(std::move(explicit_dirs)),
      modules_(superproject_git_dir.empty() ? fs::path() : superproject_git_dir / "modules") {}

std::vector<fs::path> SubmoduleMirrors::searched(const std::string& path) const {
  if (const auto it = explicit_.find(path); it != explicit_.end()) return {it->second};
  std::vector<fs::path> out;
  if (!modules_.empty()) {
    // git names a submodule's directory after its name in .gitmodules: TVM's are "dlpack",
    // "dmlc-core" or the path itself ("3rdparty/rang").
    out.push_back(modules_ / path);
    out.push_back(modules_ / fs::path(path).filename());
  }
  for (const auto& root : roots_) {
    for (const std::string& name : mirror_names(path)) {
      for (const fs::path& p : {root / name / "repo", root / name, root / (name + ".git")}) {
        out.push_back(p);
      }
    }
  }
  return out;
}

std::optional<fs::path> SubmoduleMirrors::find(const std::string& path) const {
  for (const auto& dir : searched(path)) {
    if (looks_like_repository(dir)) return dir;
  }
  return std::nullopt;
}

bool SubmoduleMirrors::needed(const std::string& path) {
  for (const auto& k : known_submodules()) {
    if (path == k.path) return k.needed;
  }
  return false;
}

std::pair<std::string, fs::path> parse_submodule_mirror(const std::string& text) {
  const std::size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    throw std::invalid_argument(
        "--submodule expects PATH=DIR (3rdparty/dlpack=/src/dlpack), got '" + text + "'");
  }
  std::string path = text.substr(0, eq);
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return {path, fs::path(text.substr(eq + 1))};
}

std::vector<std::string> materialise_tvm_tree(const GitRepo& tvm, const std::string& commit,
                                              const SubmoduleMirrors& mirrors,
                                              const fs::path& scratch_dir, const fs::path& into) {
  std::vector<std::string> notes;
  tvm.extract(commit, scratch_dir / "tvm.tar", into);
  for (const Gitlink& link : tvm.gitlinks(commit, "3rdparty")) {
    const auto mirror = mirrors.find(link.path);
    if (!mirror && SubmoduleMirrors::needed(link.path)) {
      throw HistoryError(
          "submodule " + link.path + " (commit " + link.commit.substr(0, 12) +
          ") has no mirror (looked in " + mirrors.searched(link.path).front().string() +
          " and by name under --submodules); give --submodule " + link.path + "=DIR");
    }
    if (!mirror) {
      notes.push_back(link.path + ": no mirror, left out (the CPU build does not need it)");
      continue;
    }
    std::optional<GitRepo> sub;
    try {
      sub.emplace(*mirror);
    } catch (const HistoryInputError& e) {
      throw HistoryError("mirror of " + link.path + ": " + e.what());
    }
    sub->extract(link.commit, scratch_dir / "submodule.tar", into / link.path);
  }
  return notes;
}

std::string last_lines(const std::string& text, int n) {
  const auto lines = lines_of(text);
  std::string out;
  const std::size_t from = lines.size() > static_cast<std::size_t>(n) ? lines.size() - n : 0;
  for (std::size_t i = from; i < lines.size(); ++i) out += (out.empty() ? "" : "\n") + lines[i];
  return out;
}

BuildOutcome build_tvm(const BuildRequest& request, const fs::path& source) {
  std::vector<std::string> argv = {request.script.string(), source.string()};
  if (request.release_patches) argv.push_back("--release-patches");
  for (const auto& p : request.patches) {
    argv.push_back("--patch");
    argv.push_back(p.string());
  }
  if (request.jobs) {
    argv.push_back("--jobs");
    argv.push_back(std::to_string(*request.jobs));
  }
  host::RunLimits l;
  l.timeout = std::chrono::hours(12);  // a first build of TVM takes an hour on 2 cores
  l.address_space = 0;
  l.file_size = 0;
  l.processes = 0;
  l.env = whole_environment();
  l.cancel = request.cancel;
  const host::RunResult r = host::run_process(argv, l);
  BuildOutcome out;
  out.cancelled = r.cancelled;
  if (r.kind == host::ExitKind::kStartFailed) {
    throw HistoryError("the build script " + request.script.string() +
                       " cannot be started: " + r.message);
  }
  if (!r.exited_ok()) {
    out.detail = "the build script " + r.describe() + ":\n" + last_lines(r.stderr_text, 20);
    return out;
  }
  const std::string home = last_lines(r.stdout_text, 1);
  if (home.empty()) {
    out.detail = "the build script printed no TVM home:\n" + last_lines(r.stderr_text, 20);
    return out;
  }
  if (const auto problem = tvm::tvm_home_problem(home)) {
    out.detail = "the build script's last line is no TVM build: " + *problem;
    return out;
  }
  out.built = true;
  out.home = home;
  return out;
}

}  // namespace aotfuzz::tvm

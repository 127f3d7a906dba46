// Finding compilers on PATH, building their command lines, and classifying their outcomes.
#include "host/toolchain.h"

#include <elf.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <optional>
#include <variant>

#include "host/tempdir.h"

namespace aotfuzz::host {
namespace {

// Why the ELF file at `path` is not whole (a segment or the section headers reach past its end,
// as when the compiler's write hit a full disk and went unreported), or nullopt when it is.
std::optional<std::string> incomplete_elf(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  Elf64_Ehdr eh{};
  if (!in.read(reinterpret_cast<char*>(&eh), sizeof eh)) return "shorter than an ELF header";
  if (std::memcmp(eh.e_ident, ELFMAG, SELFMAG) != 0) return "no ELF magic";
  if (eh.e_ident[EI_CLASS] != ELFCLASS64) return std::nullopt;  // not ours to check
  std::error_code ec;
  const std::uint64_t size = std::filesystem::file_size(path, ec);
  if (ec) return "its size cannot be read";
  if (eh.e_shoff != 0 && eh.e_shoff + std::uint64_t{eh.e_shentsize} * eh.e_shnum > size) {
    return "its section headers end past its " + std::to_string(size) + " bytes";
  }
  for (unsigned i = 0; i < eh.e_phnum; ++i) {
    Elf64_Phdr ph{};
    in.seekg(static_cast<std::streamoff>(eh.e_phoff + std::uint64_t{i} * eh.e_phentsize));
    if (!in.read(reinterpret_cast<char*>(&ph), sizeof ph)) return "a program header is cut off";
    if (ph.p_type == PT_LOAD && ph.p_offset + ph.p_filesz > size) {
      return "a segment ends past its " + std::to_string(size) + " bytes";
    }
  }
  return std::nullopt;
}

std::string first_line(const std::string& text) {
  auto end = text.find('\n');
  std::string line = text.substr(0, end);
  while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
  return line;
}

bool contains(const std::string& haystack, std::string_view needle) {
  return haystack.find(needle) != std::string::npos;
}

// Diagnostics that mean the compiler itself (or its environment) failed, not the code.
bool looks_like_toolchain_failure(const std::string& diagnostics) {
  static constexpr std::array<std::string_view, 13> kMarkers = {
      "internal compiler error",
      "PLEASE submit a bug report",
      "frontend command failed",
      "unable to execute command",
      "fatal error: cannot execute",
      "terminated with signal",
      "Killed signal terminated program",
      "virtual memory exhausted",
      "out of memory allocating",
      "LLVM ERROR:",
      "No space left on device",
      "cannot find crt",
      "ld: cannot find -l",
  };
  return std::any_of(kMarkers.begin(), kMarkers.end(),
                     [&](std::string_view m) { return contains(diagnostics, m); });
}

}  // namespace

std::string_view compiler_kind_name(CompilerKind kind) {
  switch (kind) {
    case CompilerKind::kTcc:
      return "tcc";
    case CompilerKind::kGcc:
      return "gcc";
    case CompilerKind::kClang:
      return "clang";
  }
  return "unknown";
}

std::optional<CompilerKind> parse_compiler_kind(std::string_view name) {
  for (auto kind : {CompilerKind::kTcc, CompilerKind::kGcc, CompilerKind::kClang}) {
    if (compiler_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

std::variant<Toolchain, std::string> probe_toolchain(CompilerKind kind, const std::string& path) {
  if (!is_executable_file(path)) return path + " is not an executable file";
  const char* flag = kind == CompilerKind::kTcc ? "-v" : "--version";
  RunLimits limits;
  limits.timeout = std::chrono::seconds(10);
  limits.address_space = 0;
  RunResult r = run_process({path, flag}, limits);
  if (!r.exited_ok()) return path + " " + flag + " " + r.describe();
  std::string version = first_line(r.stdout_text.empty() ? r.stderr_text : r.stdout_text);
  if (version.empty()) return path + " " + flag + " printed no version";
  return Toolchain{kind, std::filesystem::absolute(path).string(), version};
}

std::variant<Toolchain, std::string> locate_toolchain(CompilerKind kind) {
  auto path = find_in_path(compiler_kind_name(kind));
  if (!path) return std::string(compiler_kind_name(kind)) + " is not in PATH";
  return probe_toolchain(kind, *path);
}

std::optional<Toolchain> find_toolchain(CompilerKind kind) {
  auto r = locate_toolchain(kind);
  if (auto* tc = std::get_if<Toolchain>(&r)) return std::move(*tc);
  return std::nullopt;
}

std::variant<Toolchain, std::string> locate_default_toolchain() {
  std::string why;
  for (auto kind : {CompilerKind::kTcc, CompilerKind::kGcc, CompilerKind::kClang}) {
    auto r = locate_toolchain(kind);
    if (std::holds_alternative<Toolchain>(r)) return r;
    why += (why.empty() ? "" : "; ") + std::get<std::string>(r);
  }
  return why;
}

std::optional<Toolchain> default_toolchain() {
  auto r = locate_default_toolchain();
  if (auto* tc = std::get_if<Toolchain>(&r)) return std::move(*tc);
  return std::nullopt;
}

std::optional<CompilerKind> sanitizing_compiler() {
  for (CompilerKind kind : {CompilerKind::kGcc, CompilerKind::kClang}) {
    if (find_toolchain(kind)) return kind;
  }
  return std::nullopt;
}


std::vector<std::string> compile_command(const Toolchain& toolchain,
                                         const std::vector<std::string>& sources,
                                         const std::string& output_exe,
                                         const CompileOptions& options) {
  std::vector<std::string> cmd{toolchain.path, "-std=c99"};
  if (!options.optimization.empty()) cmd.push_back(options.optimization);
  if (options.warnings_as_errors) {
    cmd.push_back("-Wall");
    if (toolchain.kind != CompilerKind::kTcc) cmd.push_back("-Wextra");
    cmd.push_back("-Werror");
  }
  switch (toolchain.kind) {
    case CompilerKind::kGcc:
      cmd.push_back("-fdiagnostics-color=never");
      break;
    case CompilerKind::kClang:
      cmd.push_back("-fno-color-diagnostics");
      break;
    case CompilerKind::kTcc:
      break;
  }
  if (options.sanitize && toolchain.kind != CompilerKind::kTcc) {
    cmd.push_back("-fsanitize=address,undefined");
    cmd.push_back("-fno-sanitize-recover=undefined");
    cmd.push_back("-fno-omit-frame-pointer");
    cmd.push_back("-g");
  }
  for (const auto& dir : options.include_dirs) cmd.push_back("-I" + dir);
  for (const auto& def : options.defines) cmd.push_back("-D" + def);
  cmd.insert(cmd.end(), options.extra_flags.begin(), options.extra_flags.end());
  if (options.object_only) cmd.push_back("-c");
  if (options.syntax_only) {
    cmd.push_back("-fsyntax-only");
  } else {
    cmd.push_back("-o");
    cmd.push_back(output_exe);
  }
  cmd.insert(cmd.end(), sources.begin(), sources.end());
  cmd.insert(cmd.end(), options.link_flags.begin(), options.link_flags.end());
  return cmd;
}

CompileResult compile(const Toolchain& toolchain, const std::vector<std::string>& sources,
                      const std::string& output_exe, const CompileOptions& options) {
  CompileResult result;
  result.command = compile_command(toolchain, sources, output_exe, options);
  auto fail = [&](std::string message) -> CompileResult& {
    result.status = CompileStatus::kToolchainError;
    result.message = std::move(message);
    return result;
  };
  if (options.sanitize && toolchain.kind == CompilerKind::kTcc) {
    return fail("sanitizers need gcc or clang; tcc has none");
  }
  if (options.syntax_only && toolchain.kind == CompilerKind::kTcc) {
    return fail("a syntax-only check needs gcc or clang");
  }
  if (sources.empty()) return fail("no source files to compile");
  for (const auto& src : sources) {
    std::error_code ec;
    if (!std::filesystem::is_regular_file(src, ec)) return fail("source file not found: " + src);
  }
  // A stale executable must not pass for a fresh one.
  std::error_code ec;
  std::filesystem::remove(output_exe, ec);

  std::optional<TempDir> scratch;
  try {
    scratch.emplace("aotfuzz-cc");
  } catch (const std::exception& e) {
    return fail(std::string("cannot create a scratch directory: ") + e.what());
  }
  RunLimits limits;
  limits.timeout = options.timeout;
  limits.address_space = 0;  // compilers map large regions; the time limit bounds them instead
  limits.file_size = std::uint64_t{512} << 20;
  limits.output_cap = std::size_t{256} << 10;
  limits.env["TMPDIR"] = scratch->path().string();
  limits.cancel = options.cancel;
  result.run = run_process(result.command, limits);
  scratch.reset();

  const RunResult& r = result.run;
  result.diagnostics = r.stderr_text;
  if (!r.stdout_text.empty()) {
    if (!result.diagnostics.empty() && result.diagnostics.back() != '\n')
      result.diagnostics += '\n';
    result.diagnostics += r.stdout_text;
  }
  switch (r.kind) {
    case ExitKind::kStartFailed:
      return fail("cannot run " + toolchain.path + ": " + r.message);
    case ExitKind::kTimedOut:
      return fail(std::string(compiler_kind_name(toolchain.kind)) + " " + r.describe());
    case ExitKind::kSignaled:
      return fail(std::string(compiler_kind_name(toolchain.kind)) + " crashed: " + r.describe());
    case ExitKind::kExited:
      break;
  }
  if (looks_like_toolchain_failure(result.diagnostics)) {
    return fail(std::string(compiler_kind_name(toolchain.kind)) +
                " failed internally: " + first_line(result.diagnostics));
  }
  if (r.exit_code == 0 && options.syntax_only) {
    result.status = CompileStatus::kOk;
    return result;
  }
  if (r.exit_code == 0) {
    if (!options.object_only && !is_executable_file(output_exe)) {
      return fail(std::string(compiler_kind_name(toolchain.kind)) +
                  " exited 0 but wrote no executable " + output_exe);
    }
    if (auto why = incomplete_elf(output_exe)) {
      return fail(std::string(compiler_kind_name(toolchain.kind)) + " wrote an incomplete " +
                  output_exe + " (" + *why + "): is its file system full?");
    }
    result.status = CompileStatus::kOk;
    return result;
  }
  if (r.exit_code == 1 && !result.diagnostics.empty()) {
    result.status = CompileStatus::kCompileError;
    // The first line that says "error" is the most useful one-line reason.
    std::string line;
    std::size_t pos = 0;
    while (pos < result.diagnostics.size()) {
      std::size_t end = result.diagnostics.find('\n', pos);
      if (end == std::string::npos) end = result.diagnostics.size();
      std::string candidate = result.diagnostics.substr(pos, end - pos);
      if (candidate.find("error") != std::string::npos) {
        line = candidate;
        break;
      }
      pos = end + 1;
    }
    result.message = line.empty() ? first_line(result.diagnostics) : line;
    return result;
  }
  return fail(std::string(compiler_kind_name(toolchain.kind)) + " " + r.describe() +
              (result.diagnostics.empty() ? " without diagnostics"
                                          : ": " + first_line(result.diagnostics)));
}

}  // namespace aotfuzz::host

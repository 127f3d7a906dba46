// C toolchain driver: finds tcc, gcc or clang on PATH at run time and compiles generated C
// out of process, classifying the outcome so that a toolchain problem is never blamed on the
// pipeline under test.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <variant>
#include <string_view>
#include <vector>

#include "host/process.h"

namespace aotfuzz::host {

/// The supported C compilers.
enum class CompilerKind { kTcc, kGcc, kClang };

/// "tcc", "gcc", "clang".
std::string_view compiler_kind_name(CompilerKind kind);
/// The kind named "tcc", "gcc" or "clang".
std::optional<CompilerKind> parse_compiler_kind(std::string_view name);

/// A compiler found on this machine.
struct Toolchain {
  CompilerKind kind = CompilerKind::kTcc;
  std::string path;     ///< absolute path of the executable
  std::string version;  ///< first line of its version banner
};

/// The compiler at `path`, treated as `kind`, or why it is none, as one phrase for an error line
/// ("/usr/bin/tcc -v timed out after 10000 ms", "... is not an executable file", ...).
std::variant<Toolchain, std::string> probe_toolchain(CompilerKind kind, const std::string& path);
/// Looks the compiler up in PATH and asks it for its version (one short subprocess); or why
/// there is none ("tcc is not in PATH", or probe_toolchain's phrase).
std::variant<Toolchain, std::string> locate_toolchain(CompilerKind kind);
/// locate_toolchain's compiler, or nullopt.
std::optional<Toolchain> find_toolchain(CompilerKind kind);
/// The fastest installed compiler: tcc, else gcc, else clang; or why each of them is none.
std::variant<Toolchain, std::string> locate_default_toolchain();
/// locate_default_toolchain's compiler, or nullopt.
std::optional<Toolchain> default_toolchain();
/// The compiler of a sanitized build when none is named: gcc, else clang (tcc has no
/// sanitizers); nullopt when neither is installed.
std::optional<CompilerKind> sanitizing_compiler();

/// How to compile.
struct CompileOptions {
  std::vector<std::string> include_dirs;  ///< -I
  std::vector<std::string> defines;       ///< -D, as "NAME" or "NAME=VALUE"
  std::string optimization = "-O0";
  /// gcc/clang: -std=c99 -Wall -Wextra -Werror; tcc: -std=c99 -Wall -Werror.
  bool warnings_as_errors = true;
  /// -fsanitize=address,undefined (gcc/clang only; asking tcc is a toolchain error). Run the
  /// result with RunLimits::address_space = 0: ASan reserves terabytes of address space.
  bool sanitize = false;
  /// Check only (-fsyntax-only, no -o): kOk means no diagnostic that is an error; nothing is
  /// written. gcc/clang only.
  bool syntax_only = false;
  /// Compile only (-c): the output is an object file to link into programs later.
  bool object_only = false;
  std::vector<std::string> extra_flags;  ///< before the sources
  std::vector<std::string> link_flags;   ///< after the sources (e.g. "-lm")
  std::chrono::milliseconds timeout{60'000};
  /// A stop request: once set, the compiler is killed (RunResult::cancelled on the result).
  const std::atomic<bool>* cancel = nullptr;
};

/// The outcome of one compilation.
enum class CompileStatus {
  kOk,              ///< the executable was written
  kCompileError,    ///< the compiler rejected the code (exit code 1 with diagnostics)
  kToolchainError,  ///< missing compiler, crash, timeout, internal compiler error, ...
};

/// What compile() did.
struct CompileResult {
  CompileStatus status = CompileStatus::kToolchainError;
  std::vector<std::string> command;  ///< the argument vector that was run
  std::string diagnostics;           ///< compiler stderr followed by stdout (capped)
  std::string message;               ///< one line on why it is not kOk
  RunResult run;                     ///< the compiler process itself
  bool ok() const { return status == CompileStatus::kOk; }
};

/// The argument vector compile() runs (for logs and replay commands).
std::vector<std::string> compile_command(const Toolchain& toolchain,
                                         const std::vector<std::string>& sources,
                                         const std::string& output_exe,
                                         const CompileOptions& options);

/// Compiles and links `sources` into `output_exe`. The compiler runs with a private TMPDIR that
/// is removed afterwards (a compiler killed at the time limit leaves no temporary files).
CompileResult compile(const Toolchain& toolchain, const std::vector<std::string>& sources,
                      const std::string& output_exe, const CompileOptions& options = {});

}  // namespace aotfuzz::host

// Shared plumbing of the subcommands: exit codes, file loading, error reporting.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "ir/module.h"

namespace aotfuzz::cli {

/// DESIGN.md §6 exit codes.
enum ExitCode : int { kOk = 0, kFinding = 1, kBadInput = 2, kInternal = 3 };

/// Thrown by commands for bad input or usage; main prints it and exits with `code`.
class CommandError : public std::runtime_error {
 public:
  CommandError(int code, const std::string& message) : std::runtime_error(message), code_(code) {}
  int code() const { return code_; }

 private:
  int code_;
};

/// Reads a whole file; a missing or unreadable file is a CommandError(kBadInput).
std::string read_file(const std::string& path);
/// Parses and verifies a module; any error becomes CommandError(kBadInput) with the position.
ir::Module load_module(const std::string& path);

/// A subcommand: registers its options on `app` and sets `run` to execute it.
struct Command {
  CLI::App* app = nullptr;
  std::function<int()> run;
};

/// One registration function per subcommand file (the table lives in main.cc).
using Registrar = Command (*)(CLI::App& parent);

Command register_gen(CLI::App& parent);
Command register_fmt(CLI::App& parent);
Command register_show(CLI::App& parent);
Command register_bugs(CLI::App& parent);

}  // namespace aotfuzz::cli

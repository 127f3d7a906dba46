// Test support for the command-line tests: the built aotfuzz binary, run from the source tree.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "host/process.h"

namespace aotfuzz::cli::test {

/// Runs aotfuzz with `args` in the source tree (so corpus paths are relative), stdin empty,
/// stdout and stderr captured, killed after `timeout_s` seconds; `env` adds to (or replaces
/// variables of) the minimal environment it gets.
host::RunResult run_aotfuzz(const std::vector<std::string>& args, int timeout_s = 120,
                              const std::map<std::string, std::string>& env = {});

/// How a process started by spawn_aotfuzz ended, and what it wrote.
struct Spawned {
  int status = 0;  ///< as waitpid gives it
  std::string out, err;
};

/// Runs aotfuzz with `args` in the source tree, stdin from `stdin_file` ("": /dev/null); with
/// `closed_stdout` its stdout is a pipe whose read end is closed before the start (every write
/// fails as after `| head` exits), else a file. SIGPIPE has its default disposition, as a shell
/// leaves it. Killed after 300 s.
Spawned spawn_aotfuzz(const std::vector<std::string>& args, const std::string& stdin_file,
                      bool closed_stdout);

/// Runs aotfuzz with `args` and asserts the shape of a usage error: exit 2, nothing on stdout,
/// exactly one line on stderr, containing `mentions`.
void expect_one_line_usage_error(const std::vector<std::string>& args,
                                 const std::string& mentions);

/// The number of lines of `text` (newline characters, plus one for an unterminated last line).
int line_count(const std::string& text);

}  // namespace aotfuzz::cli::test

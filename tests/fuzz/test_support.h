// Shared helpers for the fuzz tests: reading corpus files and running python3.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "ir/module.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/process.h"
#include "oracle/toolchain.h"

namespace aotfuzz::fuzz::testing {

inline std::string source_path(const std::string& relative) {
  return std::string(AOTFUZZ_SOURCE_DIR) + "/" + relative;
}

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline ir::Module parse(const std::string& text) {
  ir::Module m = ir::parse_module(text, "<test>");
  ir::verify(m);
  return m;
}

inline ir::Module load(const std::string& relative) {
  return parse(read_text(source_path(relative)));
}

/// Runs python3 with `args`; the result of the process.
inline oracle::RunResult python(const std::vector<std::string>& args) {
  auto exe = oracle::find_in_path("python3");
  if (!exe) {
    oracle::RunResult r;
    r.message = "python3 is not installed (scripts/setup.sh installs it)";
    return r;
  }
  std::vector<std::string> argv{*exe};
  argv.insert(argv.end(), args.begin(), args.end());
  oracle::RunLimits limits;
  limits.timeout = std::chrono::seconds(60);
  limits.address_space = 0;
  return oracle::run_process(argv, limits);
}

}  // namespace aotfuzz::fuzz::testing

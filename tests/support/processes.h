// Test support: C compilers and processes (python3, a configurable child program, $TMPDIR).
#pragma once

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "host/process.h"
#include "host/tempdir.h"
#include "host/toolchain.h"

namespace aotfuzz::test_support {

/// The compiler of `kind`, looked up once per test binary.
const std::optional<host::Toolchain>& toolchain_of(host::CompilerKind kind);

/// Runs python3 with `args` (60 s limit); a result with a message when python3 is missing.
host::RunResult python(const std::vector<std::string>& args);

/// A C program whose behaviour is chosen by argv[1] (exit codes, signals, output floods, limits,
/// environment, ...), compiled once per test binary with the default compiler; empty (and the
/// current test failed) when that is impossible. The process tests run it.
const std::string& child_program();

/// Points $TMPDIR at a fresh, empty directory for the lifetime of the object: an
/// host::ScopedTempRoot that must be made (the test fails with an exception otherwise).
class ScopedTmpdir {
 public:
  ScopedTmpdir();
  const std::filesystem::path& path() const { return root_.root()->path(); }

 private:
  host::ScopedTempRoot root_;
};

}  // namespace aotfuzz::test_support

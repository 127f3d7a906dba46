// Test support: generated C compiled with the harness and run, and the checks on what it did.
#pragma once

#include <string>
#include <vector>

#include "aot/codegen.h"
#include "host/process.h"
#include "host/toolchain.h"
#include "ir/module.h"
#include "oracle/harness.h"
#include "reference/value.h"

namespace aotfuzz::test_support {

/// What one compile-and-run did.
struct RunOutcome {
  aot::CSources sources;
  host::CompileResult compiled;
  host::RunResult run;
  oracle::ParsedRun parsed;
};

/// How to build the test program.
struct BuildConfig {
  host::CompilerKind kind = host::CompilerKind::kTcc;
  std::vector<std::string> extra_flags;
  bool sanitize = false;  ///< ASan + UBSan (gcc, clang)
};

/// Generates C for `fused`, writes it with the harness for `inputs`, compiles it (-Werror,
/// -DAOTFUZZ_TRACE) and runs the program. No gtest assertions: callers check `compiled`/`run`
/// (a missing compiler gives a compile result with a message).
RunOutcome build_and_run(const ir::Module& fused, const aot::Options& options,
                         const std::vector<reference::Value>& inputs,
                         const BuildConfig& config = {});

/// build_and_run, failing the current test when the code does not compile.
RunOutcome compile_and_run(const ir::Module& fused, const aot::Options& options,
                           const std::vector<reference::Value>& inputs,
                           const BuildConfig& config = {});

/// The flattened outputs of the reference interpreter on `module`.
std::vector<reference::Value> expected_outputs(const ir::Module& module,
                                               const std::vector<reference::Value>& inputs);

/// Asserts that a run completed and that every output equals `expected` bitwise.
void expect_matches(const RunOutcome& r, const std::vector<reference::Value>& expected,
                    const ir::Function& main);

}  // namespace aotfuzz::test_support

// Shared helpers of the codegen, storage and harness tests: the seed module through the passes,
// hand-written fused modules, and compile-and-run of generated C with the harness.
#pragma once

#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "aot/codegen.h"
#include "aot/pipeline.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/harness.h"
#include "oracle/process.h"
#include "oracle/tempdir.h"
#include "oracle/toolchain.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace aotfuzz::codegen_testing {

inline std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

/// The annotated seed graph of TVM #9036.
inline ir::Module seed_annotated() {
  const std::string path =
      std::string(AOTFUZZ_SOURCE_DIR) + "/corpus/seed/tvm_9036_annotated.relay";
  return ir::parse_module(read_text(path), path);
}

/// `annotated` through the passes (merge on by default).
inline ir::Module fused_of(const ir::Module& annotated, bool merge = true,
                           const std::string& mod_name = "default") {
  aot::Options options;
  options.merge = merge;
  options.mod_name = mod_name;
  return aot::run_passes(annotated, options).at(aot::Stage::kFuse);
}

/// A fused module written by hand in Relay text (verified).
inline ir::Module parse_fused(const std::string& text) {
  ir::Module m = ir::parse_module(text, "<test>");
  ir::verify(m);
  return m;
}

inline const std::optional<oracle::Toolchain>& compiler(oracle::CompilerKind kind) {
  static const std::optional<oracle::Toolchain> kTcc =
      oracle::find_toolchain(oracle::CompilerKind::kTcc);
  static const std::optional<oracle::Toolchain> kGcc =
      oracle::find_toolchain(oracle::CompilerKind::kGcc);
  static const std::optional<oracle::Toolchain> kClang =
      oracle::find_toolchain(oracle::CompilerKind::kClang);
  return kind == oracle::CompilerKind::kTcc   ? kTcc
         : kind == oracle::CompilerKind::kGcc ? kGcc
                                              : kClang;
}

/// What one compile-and-run did.
struct RunOutcome {
  aot::CSources sources;
  oracle::CompileResult compiled;
  oracle::RunResult run;
  oracle::ParsedRun parsed;
};

/// How to build the test program.
struct BuildConfig {
  oracle::CompilerKind kind = oracle::CompilerKind::kTcc;
  std::vector<std::string> extra_flags;
  bool sanitize = false;  ///< ASan + UBSan (gcc, clang)
};

/// Generates C for `fused`, writes it with the harness for `inputs`, compiles it (-Werror,
/// -DAOTFUZZ_TRACE) and runs the program. No gtest assertions: callers check `compiled`/`run`
/// (a missing compiler gives a toolchain-error compile result).
inline RunOutcome build_and_run(const ir::Module& fused, const aot::Options& options,
                                const std::vector<reference::Value>& inputs,
                                const BuildConfig& config = {}) {
  RunOutcome out;
  const auto& tc = compiler(config.kind);
  if (!tc) {
    out.compiled.message = std::string("compiler ") +
                           std::string(oracle::compiler_kind_name(config.kind)) + " not found";
    return out;
  }
  out.sources = aot::generate_c(fused, options);
  oracle::TempDir dir("aotfuzz-codegen-test");
  for (const auto& [name, content] : out.sources.files) {
    std::ofstream(dir.file(name), std::ios::binary) << content;
  }
  std::ofstream(dir.file("main.c"), std::ios::binary) << oracle::harness_c(fused, options, inputs);
  oracle::CompileOptions copts;
  copts.include_dirs = {dir.path().string()};
  copts.defines = {"AOTFUZZ_TRACE"};
  copts.extra_flags = config.extra_flags;
  copts.sanitize = config.sanitize;
  const std::string exe = dir.file("model").string();
  out.compiled = oracle::compile(
      *tc, {dir.file("main.c").string(), dir.file(aot::lib_file_name(options)).string()}, exe,
      copts);
  if (!out.compiled.ok()) return out;
  oracle::RunLimits limits;
  if (config.sanitize) limits.address_space = 0;
  out.run = oracle::run_process({exe}, limits);
  out.parsed = oracle::parse_harness_output(out.run.stdout_text);
  return out;
}

/// build_and_run, failing the current test when the code does not compile.
inline RunOutcome compile_and_run(const ir::Module& fused, const aot::Options& options,
                                  const std::vector<reference::Value>& inputs,
                                  const BuildConfig& config = {}) {
  RunOutcome out = build_and_run(fused, options, inputs, config);
  if (!out.compiled.ok()) {
    ADD_FAILURE() << "compile failed (" << oracle::compiler_kind_name(config.kind)
                  << "): " << out.compiled.message << "\n"
                  << out.compiled.diagnostics;
  }
  return out;
}

/// The flattened outputs of the reference interpreter on `module`.
inline std::vector<reference::Value> expected_outputs(const ir::Module& module,
                                                      const std::vector<reference::Value>& in) {
  return reference::run_main(module, in).flatten();
}

/// Asserts that a run completed and that every output equals `expected` bitwise.
inline void expect_matches(const RunOutcome& r, const std::vector<reference::Value>& expected,
                           const ir::Function& main) {
  ASSERT_TRUE(r.run.exited_ok()) << r.run.describe() << "\n" << r.run.stdout_text;
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  ASSERT_EQ(r.parsed.rcs, (std::vector<int>{0, 0}));
  EXPECT_TRUE(r.parsed.unwritten.empty());
  const auto actual = oracle::output_values(r.parsed, main);
  ASSERT_EQ(actual.size(), expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    auto mismatch = reference::first_mismatch(expected[i], actual[i]);
    EXPECT_FALSE(mismatch.has_value()) << "output " << i << ": " << mismatch->to_string();
  }
}

}  // namespace aotfuzz::codegen_testing

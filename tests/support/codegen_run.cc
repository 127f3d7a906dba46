#include "tests/support/codegen_run.h"

#include <gtest/gtest.h>

#include <fstream>

#include "host/tempdir.h"
#include "reference/interpreter.h"
#include "tests/support/processes.h"

namespace aotfuzz::test_support {

RunOutcome build_and_run(const ir::Module& fused, const aot::Options& options,
                         const std::vector<reference::Value>& inputs, const BuildConfig& config) {
  RunOutcome out;
  const auto& tc = toolchain_of(config.kind);
  if (!tc) {
    out.compiled.message = std::string("compiler ") +
                           std::string(host::compiler_kind_name(config.kind)) + " not found";
    return out;
  }
  out.sources = aot::generate_c(fused, options);
  host::TempDir dir("aotfuzz-codegen-test");
  for (const auto& [name, content] : out.sources.files) {
    std::ofstream(dir.file(name), std::ios::binary) << content;
  }
  std::ofstream(dir.file("main.c"), std::ios::binary) << oracle::harness_c(fused, options, inputs);
  host::CompileOptions copts;
  copts.include_dirs = {dir.path().string()};
  copts.defines = {"AOTFUZZ_TRACE"};
  copts.extra_flags = config.extra_flags;
  copts.sanitize = config.sanitize;
  const std::string exe = dir.file("model").string();
  out.compiled = host::compile(
      *tc, {dir.file("main.c").string(), dir.file(aot::lib_file_name(options)).string()}, exe,
      copts);
  if (!out.compiled.ok()) return out;
  host::RunLimits limits;
  if (config.sanitize) limits.address_space = 0;
  out.run = host::run_process({exe}, limits);
  out.parsed = oracle::parse_harness_output(out.run.stdout_text);
  return out;
}

RunOutcome compile_and_run(const ir::Module& fused, const aot::Options& options,
                           const std::vector<reference::Value>& inputs, const BuildConfig& config) {
  RunOutcome out = build_and_run(fused, options, inputs, config);
  if (!out.compiled.ok()) {
    ADD_FAILURE() << "compile failed (" << host::compiler_kind_name(config.kind)
                  << "): " << out.compiled.message << "\n"
                  << out.compiled.diagnostics;
  }
  return out;
}

std::vector<reference::Value> expected_outputs(const ir::Module& module,
                                               const std::vector<reference::Value>& inputs) {
  return reference::run_main(module, inputs).flatten();
}

void expect_matches(const RunOutcome& r, const std::vector<reference::Value>& expected,
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

}  // namespace aotfuzz::test_support

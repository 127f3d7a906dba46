// libFuzzer target fuzz_differential: fuzz_pipeline's decoder, then the whole out-of-process
// oracle: the emitted C compiled in memory by libtcc (linked statically: no C compiler needed at
// run time) and run in a child forked from this process under the case's limits, through the
// same batch runner campaigns use (oracle::BatchedExecutor in process); judged by judge_case,
// as run_case judges. Builds without libtcc fall back to run_case with an installed compiler, and
// without one every input is skipped (said once at start-up).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>

#include "fuzz/targets/crash_sites.h"
#include "fuzz/targets/target_support.h"
#include "generator/builder.h"
#include "oracle/case_flow.h"
#include "oracle/executor.h"
#include "oracle/runner/runner.h"
#include "oracle/toolchain.h"

namespace targets = aotfuzz::fuzz::targets;
namespace oracle = aotfuzz::oracle;

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define AOTFUZZ_UNDER_ASAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define AOTFUZZ_UNDER_ASAN 1
#endif

namespace {
// Looked up once (a lookup runs the compiler).
std::optional<oracle::Toolchain> toolchain;
std::unique_ptr<oracle::BatchedExecutor> executor;
}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  if (oracle::runner::have_libtcc()) {
    oracle::BatchOptions options;
    options.in_process = true;
    options.compiler = oracle::CompilerKind::kTcc;
    executor = std::make_unique<oracle::BatchedExecutor>(options);
  } else {
    toolchain = oracle::default_toolchain();
  }
  std::fprintf(stderr, "fuzz_differential: injected bugs: %s; %s\n",
               targets::injected_bug_names().c_str(),
               executor    ? "libtcc in process"
               : toolchain ? "C compiler found"
                           : "no libtcc and no C compiler (tcc, gcc, clang): skipping every input");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || (!executor && !toolchain)) return 0;
  const auto annotated = aotfuzz::generator::decode(targets::fuzz_policy(), data + 1, size - 1);
  oracle::CaseOptions options = targets::case_options(data[0]);
  oracle::CaseResult r;
  if (executor) {
#ifdef AOTFUZZ_UNDER_ASAN
    // AddressSanitizer reserves terabytes of address space: the child cannot live under
    // RLIMIT_AS (libFuzzer's -rss_limit_mb bounds memory instead).
    options.limits.address_space = 0;
#endif
    if (auto prepared = oracle::prepare_case(annotated, options, r)) {
      const auto raw = executor->run(std::span<const oracle::PreparedCase>(&*prepared, 1));
      oracle::judge_case(annotated, options, *prepared, raw.front(), r);
    }
  } else {
    options.compiler = toolchain->kind;
    options.toolchain = toolchain;
    r = oracle::run_case(annotated, options);
  }
  if (oracle::is_finding(r.verdict)) {
    targets::report_finding(r.verdict, targets::finding_context(annotated, options));
  }
  return 0;
}

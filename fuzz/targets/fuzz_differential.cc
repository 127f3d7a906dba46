// libFuzzer target fuzz_differential: fuzz_pipeline's decoder, then the whole out-of-process
// oracle (oracle::run_case: the emitted C compiled with tcc, else gcc, else clang, and run in a
// child process). Slow (milliseconds per input) and needs a C compiler at run time, so it is for
// long jobs on machines that have one, not for ClusterFuzzLite; without a compiler every input is
// skipped (said once at start-up).
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>

#include "fuzz/targets/crash_sites.h"
#include "fuzz/targets/target_support.h"
#include "generator/builder.h"
#include "oracle/toolchain.h"

namespace targets = aotfuzz::fuzz::targets;
namespace oracle = aotfuzz::oracle;

namespace {
// Looked up once (a lookup runs the compiler).
std::optional<oracle::Toolchain> toolchain;
}

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  toolchain = oracle::default_toolchain();
  std::fprintf(stderr, "fuzz_differential: injected bugs: %s; %s\n",
               targets::injected_bug_names().c_str(),
               toolchain ? "C compiler found"
                         : "no C compiler (tcc, gcc, clang): skipping every input");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || !toolchain) return 0;
  const auto annotated = aotfuzz::generator::decode(targets::fuzz_policy(), data + 1, size - 1);
  oracle::CaseOptions options = targets::case_options(data[0]);
  options.compiler = toolchain->kind;
  options.toolchain = toolchain;
  const oracle::CaseResult r = oracle::run_case(annotated, options);
  if (oracle::is_finding(r.verdict)) {
    targets::report_finding(r.verdict, targets::finding_context(annotated, options));
  }
  return 0;
}

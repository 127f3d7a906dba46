// libFuzzer target fuzz_differential: fuzz_pipeline's decoder, then the whole out-of-process
// oracle (oracle::run_case: the emitted C compiled with tcc, else gcc, else clang, and run in a
// child process). Slow (milliseconds per input) and needs a C compiler at run time, so it is for
// long jobs on machines that have one, not for ClusterFuzzLite; without a compiler every input is
// skipped (said once at start-up).
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "fuzz/targets/crash_sites.h"
#include "fuzz/targets/target_support.h"
#include "generator/builder.h"
#include "oracle/toolchain.h"

namespace targets = aotfuzz::fuzz::targets;
namespace oracle = aotfuzz::oracle;

namespace {
bool have_compiler = false;
}

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  have_compiler = oracle::default_toolchain().has_value();
  std::fprintf(stderr, "fuzz_differential: injected bugs: %s; %s\n",
               targets::injected_bug_names().c_str(),
               have_compiler ? "C compiler found" : "no C compiler (tcc, gcc, clang): skipping every input");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0 || !have_compiler) return 0;
  const auto annotated = aotfuzz::generator::decode(targets::fuzz_policy(), data + 1, size - 1);
  oracle::CaseOptions options = targets::case_options(data[0]);
  options.pipeline.merge = (data[0] & 8) == 0;
  const oracle::CaseResult r = oracle::run_case(annotated, options);
  if (oracle::is_finding(r.verdict)) {
    targets::report_finding(r.verdict, targets::finding_context(annotated, options));
  }
  return 0;
}

// libFuzzer target fuzz_pipeline: bytes -> graph (generator::decode) -> every pass, the reference
// interpreter on every stage, and the plan interpreter running the AoT executor program in
// process. Property: no stage and no executor output differs from the reference, every call passes
// as many arguments as its callee takes, nothing crashes.
//
// The first byte picks the options (API, interface, storage reuse, merging); the rest drives the
// decoder. AOTFUZZ_INJECT=<bug>[,<bug>...] injects catalogue bugs (aotfuzz bugs), e.g.
// AOTFUZZ_INJECT=tuple-arg-first-field to watch the #9036 class being found.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "fuzz/targets/target_support.h"
#include "generator/builder.h"

namespace targets = aotfuzz::fuzz::targets;

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::fprintf(stderr, "fuzz_pipeline: injected bugs: %s\n", targets::injected_bug_names().c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const aotfuzz::ir::Module annotated =
      aotfuzz::generator::decode(targets::fuzz_policy(), data + 1, size - 1);
  targets::check_in_process(annotated, targets::case_options(data[0]));
  return 0;
}

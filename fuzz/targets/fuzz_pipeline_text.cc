// libFuzzer target fuzz_pipeline_text: fuzz_pipeline's property on .relay text inputs. The custom
// mutator (text_mutator.cc) edits the parsed graph and prints it again, so the corpus stays
// readable Relay. Every input is checked with the packed API (TVM's default); a hash of the text
// picks storage reuse and whether the unpacked API (and its interface) is checked too.
#include <cstddef>
#include <cstdint>
#include <cstdio>

#include "fuzz/targets/target_support.h"

namespace targets = aotfuzz::fuzz::targets;

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  std::fprintf(stderr, "fuzz_pipeline_text: injected bugs: %s\n",
               targets::injected_bug_names().c_str());
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto annotated = targets::parse_bounded(data, size);
  if (!annotated) return 0;  // not a valid annotated module: nothing to judge
  const auto flags = static_cast<std::uint8_t>(targets::hash_bytes(data, size) >> 56);
  // Packed API with merging always (a corpus repro shows its bug whatever its hash); the unpacked
  // API, and merging off, as the hash picks.
  targets::check_in_process(*annotated, targets::case_options(flags & ~9u));
  if (flags & 1) targets::check_in_process(*annotated, targets::case_options(flags));
  return 0;
}

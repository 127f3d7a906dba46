// fuzz_pipeline's per-input work (as in_process_bench) a fixed number of times, for instruction
// counts: on a shared VM, wall-clock figures vary by ±20% from run to run, while callgrind's
// count is exact. Instructions per input are the difference of two round counts:
//   valgrind --tool=callgrind in_process_rounds 0   (setup only)
//   valgrind --tool=callgrind in_process_rounds 2   (setup and 2 x 64 inputs)
#include <cstdlib>
#include <iostream>

#include "generator/builder.h"
#include "generator/policy.h"
#include "oracle/plan_interpreter.h"

int main(int argc, char** argv) {
  using namespace aotfuzz;
  if (argc != 2) {
    std::cerr << "usage: in_process_rounds ROUNDS\n";
    return 2;
  }
  const int rounds = std::atoi(argv[1]);
  generator::GenPolicy policy = generator::with_size(generator::GenPolicy{}, 20);
  policy.max_dim = 4;  // as fuzz/targets/target_support.cc's fuzz_policy()
  std::vector<ir::Module> inputs;
  for (int i = 0; i < 64; ++i) {
    ir::Rng rng(1000 + static_cast<std::uint64_t>(i));
    inputs.push_back(generator::generate(policy, rng));
  }
  int passed = 0;
  for (int r = 0; r < rounds; ++r) {
    for (int i = 0; i < 64; ++i) {
      oracle::CaseOptions options;
      options.aot.merge = (i + r) % 2 == 0;  // each input with merging on and off
      passed += oracle::run_case_in_process(inputs[i], options).verdict.kind() ==
                oracle::VerdictKind::kPass;
    }
  }
  std::cout << passed << " of " << 64 * rounds << " inputs passed\n";
  return 0;
}

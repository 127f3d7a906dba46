// Counts of the work of preparing cases, apart from the case flow so that the stages count their
// reference runs without including the flow that calls them.
#pragma once

#include <cstdint>

namespace aotfuzz::oracle {

/// The work of preparing cases, counted for tests and measurements of what a case costs: C
/// generations (the determinism oracle's second one included) and runs of the reference
/// interpreter on a whole graph (the reference, then each stage). What aotfuzz-probe children
/// did is counted apart (probe_work, oracle/in_process_probe.h).
struct PrepareWork {
  std::uint64_t c_generations = 0;
  std::uint64_t reference_runs = 0;
};
/// The work this process has done so far (every thread).
PrepareWork prepare_work();
/// Counts `work` as done in this process.
void add_prepare_work(const PrepareWork& work);

}  // namespace aotfuzz::oracle

#include "oracle/prepare_work.h"

#include <atomic>

namespace aotfuzz::oracle {
namespace {

// Every thread of the process adds to them: a count for tests and measurements, never an input
// to a verdict.
std::atomic<std::uint64_t> g_c_generations{0};
std::atomic<std::uint64_t> g_reference_runs{0};

}  // namespace

PrepareWork prepare_work() {
  return {g_c_generations.load(std::memory_order_relaxed),
          g_reference_runs.load(std::memory_order_relaxed)};
}

void add_prepare_work(const PrepareWork& work) {
  g_c_generations.fetch_add(work.c_generations, std::memory_order_relaxed);
  g_reference_runs.fetch_add(work.reference_runs, std::memory_order_relaxed);
}

}  // namespace aotfuzz::oracle

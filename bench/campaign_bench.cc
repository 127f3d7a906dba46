// Campaign throughput: cases per second of a fixed-seed campaign end to end (generation, passes,
// codegen, tcc, out-of-process run), in-process only (no C compiler), and one reduction of the
// #9036 seed graph. Child CPU time is reported next to wall time: it is barely affected by other
// load on the machine.
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include "aot/bugs.h"
#include "fuzz/campaign.h"
#include "ir/parser.h"
#include "reduce/reducer.h"

namespace {

using namespace aotfuzz;

// corpus/seed/tvm_9036_annotated.relay
constexpr const char* k9036 = R"(
def @main(%x: Tensor[(10, 10), float32], %w0: Tensor[(10, 10), float32], %w1: Tensor[(10, 10), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = annotation.compiler_begin(%w0, compiler="ccompiler");
  %2 = add(%0, %1);
  %3 = annotation.compiler_end(%2, compiler="ccompiler");
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = annotation.compiler_begin(%w1, compiler="ccompiler");
  %6 = add(%4, %5);
  %7 = annotation.compiler_end(%6, compiler="ccompiler");
  add(%3, %7)
})";

double children_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

void run_cases(benchmark::State& state, bool in_process) {
  const auto cases = static_cast<std::uint64_t>(state.range(0));
  std::uint64_t total = 0;
  const double cpu0 = children_cpu_seconds();
  std::uint64_t seed = 1;
  for (auto _ : state) {
    fuzz::CampaignOptions o;
    o.seed = seed++;
    o.max_cases = cases;
    o.jobs = static_cast<int>(state.range(1));
    o.base.in_process_only = in_process;
    auto r = fuzz::run_campaign(o);
    total += r.stats.cases;
  }
  state.counters["cases_per_s"] =
      benchmark::Counter(static_cast<double>(total), benchmark::Counter::kIsRate);
  state.counters["child_cpu_ms_per_case"] = 1000.0 * (children_cpu_seconds() - cpu0) /
                                            static_cast<double>(std::max<std::uint64_t>(total, 1));
}

// Full cases: args = cases per iteration, jobs.
void BM_CampaignCompiled(benchmark::State& state) { run_cases(state, false); }
BENCHMARK(BM_CampaignCompiled)
    ->Args({40, 1})
    ->Args({40, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime()
    ->Iterations(3);

// Pipeline only (generation, passes, interpretation, codegen, static arity).
void BM_CampaignInProcess(benchmark::State& state) { run_cases(state, true); }
BENCHMARK(BM_CampaignInProcess)->Args({200, 1})->Unit(benchmark::kMillisecond)->UseRealTime();

// One reduction of the #9036 seed graph with the bug injected.
void BM_Reduce9036(benchmark::State& state) {
  ir::Module m = ir::parse_module(k9036);
  oracle::CaseOptions o;
  o.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  for (auto _ : state) {
    reduce::ReduceOptions ro;
    ro.jobs = static_cast<int>(state.range(0));
    auto r = reduce::reduce(m, reduce::same_signature(o, "arity:codegen:kernel"), ro);
    state.counters["steps"] = static_cast<double>(r.steps);
    state.counters["runs"] = static_cast<double>(r.evaluated);
  }
}
BENCHMARK(BM_Reduce9036)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime()->Iterations(2);

}  // namespace

BENCHMARK_MAIN();

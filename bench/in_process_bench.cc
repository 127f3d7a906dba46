// The per-input work of the fuzz_pipeline target without libFuzzer around it: the reference,
// every pass (merging on for every other input, as the target's flags byte alternates it), the
// interpreter on every stage and the plan interpreter. Inputs are generated graphs of about 20 ops
// (the fuzz target's policy), so `execs_per_s` is the target's ceiling on one core before coverage
// instrumentation.
#include <benchmark/benchmark.h>

#include "generator/builder.h"
#include "generator/policy.h"
#include "generator/stats.h"
#include "oracle/plan_interpreter.h"

namespace {

using namespace aotfuzz;

std::vector<ir::Module> graphs(int ops, int count) {
  generator::GenPolicy policy = generator::with_size(generator::GenPolicy{}, ops);
  policy.max_dim = 4;  // as fuzz/targets/target_support.cc's fuzz_policy()
  std::vector<ir::Module> out;
  for (int i = 0; i < count; ++i) {
    ir::Rng rng(1000 + static_cast<std::uint64_t>(i));
    out.push_back(generator::generate(policy, rng));
  }
  return out;
}

void BM_FuzzPipelineInput(benchmark::State& state) {
  const auto inputs = graphs(static_cast<int>(state.range(0)), 64);
  double ops = 0;
  for (const auto& m : inputs) ops += static_cast<double>(generator::graph_stats(m).ops);
  std::size_t next = 0;
  for (auto _ : state) {
    oracle::CaseOptions options;
    options.pipeline.merge = next % 2 == 0;
    const ir::Module& m = inputs[next++ % inputs.size()];
    benchmark::DoNotOptimize(oracle::run_case_in_process(m, options));
  }
  state.counters["execs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["mean_ops"] = ops / static_cast<double>(inputs.size());
}
BENCHMARK(BM_FuzzPipelineInput)->Arg(5)->Arg(20)->ArgName("ops")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

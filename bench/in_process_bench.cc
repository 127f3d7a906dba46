// The per-input work of the fuzz_pipeline target without libFuzzer around it: the reference,
// every pass (merging on for every other input, as the target's flags byte alternates it), the
// interpreter on every stage and the plan interpreter. Inputs are generated graphs of about 20 ops
// (the fuzz target's policy), so `execs_per_s` is the target's ceiling on one core before coverage
// instrumentation.
#include <benchmark/benchmark.h>

#include "aot/codegen.h"
#include "aot/executor_program.h"
#include "aot/pipeline.h"
#include "generator/builder.h"
#include "generator/policy.h"
#include "generator/stats.h"
#include "ir/verify.h"
#include "oracle/plan_interpreter.h"
#include "oracle/structure.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

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

void run_inputs(benchmark::State& state, bool check_structure) {
  const auto inputs = graphs(static_cast<int>(state.range(0)), 64);
  double ops = 0;
  for (const auto& m : inputs) ops += static_cast<double>(generator::graph_stats(m).ops);
  std::size_t next = 0;
  for (auto _ : state) {
    oracle::CaseOptions options;
    options.aot.merge = next % 2 == 0;
    options.check_structure = check_structure;
    const ir::Module& m = inputs[next++ % inputs.size()];
    benchmark::DoNotOptimize(oracle::run_case_in_process(m, options));
  }
  state.counters["execs_per_s"] =
      benchmark::Counter(static_cast<double>(state.iterations()), benchmark::Counter::kIsRate);
  state.counters["mean_ops"] = ops / static_cast<double>(inputs.size());
}

void BM_FuzzPipelineInput(benchmark::State& state) { run_inputs(state, true); }
BENCHMARK(BM_FuzzPipelineInput)->Arg(5)->Arg(20)->ArgName("ops")->Unit(benchmark::kMicrosecond);

// Without the structural oracle (oracle/structure.h): the checks the target made before it, for
// comparing this work with builds that predate it.
void BM_FuzzPipelineInputNoStructure(benchmark::State& state) { run_inputs(state, false); }
BENCHMARK(BM_FuzzPipelineInputNoStructure)
    ->Arg(5)
    ->Arg(20)
    ->ArgName("ops")
    ->Unit(benchmark::kMicrosecond);

// One phase of that work at a time, on the 20-op inputs, so a change shows where it helps.
enum Phase : int {
  kVerify,
  kReference,
  kPasses,
  kInterpretStages,
  kExecutorProgram,
  kArity,
  kPlanRun,
  kStructure
};

void BM_Phase(benchmark::State& state) {
  const auto phase = static_cast<Phase>(state.range(0));
  const auto inputs = graphs(20, 64);
  struct Prepared {
    ir::Module annotated;
    aot::Stages stages;
    std::vector<reference::Value> args;
    aot::ExecutorProgram program;
    aot::Stages merged;  // with MergeCompilerRegions on, for the structural check of every pass
  };
  aot::Options cg;
  aot::Options merging;
  merging.merge = true;
  std::vector<Prepared> prepared;
  for (const auto& m : inputs) {
    Prepared p{m, aot::run_passes(m), reference::make_inputs(m.main(), 1), {},
               aot::run_passes(m, merging)};
    p.program = aot::build_executor_program(p.stages.output(), cg);
    prepared.push_back(std::move(p));
  }
  std::size_t next = 0;
  for (auto _ : state) {
    const Prepared& p = prepared[next++ % prepared.size()];
    switch (phase) {
      case kVerify:  // once per stage, as the passes and the reference do
        ir::verify(p.stages.annotated());
        ir::verify(p.stages.at(aot::Stage::kMerge));
        ir::verify(p.stages.at(aot::Stage::kPartition));
        ir::verify(p.stages.output());
        break;
      case kReference:
        benchmark::DoNotOptimize(reference::run_main(p.annotated, p.args));
        break;
      case kPasses:
        benchmark::DoNotOptimize(aot::run_passes(p.annotated));
        break;
      case kInterpretStages:
        benchmark::DoNotOptimize(reference::run_main(p.stages.at(aot::Stage::kMerge), p.args));
        benchmark::DoNotOptimize(reference::run_main(p.stages.at(aot::Stage::kPartition), p.args));
        benchmark::DoNotOptimize(reference::run_main(p.stages.output(), p.args));
        break;
      case kExecutorProgram:
        benchmark::DoNotOptimize(aot::build_executor_program(p.stages.output(), cg));
        break;
      case kArity:
        benchmark::DoNotOptimize(aot::expected_call_arity(p.stages.output(), cg));
        break;
      case kPlanRun:
        benchmark::DoNotOptimize(oracle::interpret_program(p.stages.output(), p.program, p.args));
        break;
      case kStructure:  // each pass's module against its reference pass's, as campaigns check
        for (const aot::PassInfo& pass : aot::pass_table()) {
          const auto before = static_cast<aot::Stage>(static_cast<unsigned>(pass.stage) - 1);
          benchmark::DoNotOptimize(oracle::check_structure(
              pass, p.merged.at(before), &p.merged.at(pass.stage), "", merging));
        }
        break;
    }
  }
}
BENCHMARK(BM_Phase)
    ->ArgNames({"phase"})
    ->DenseRange(kVerify, kStructure)
    ->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();

// Speed of the IR-to-IR passes on generated graphs (the goal: a 10,000-op graph through every pass
// well under a second) and on long annotated chains.
#include <benchmark/benchmark.h>

#include "aot/fuse_ops.h"
#include "aot/merge_compiler_regions.h"
#include "aot/partition_graph.h"
#include "aot/pipeline.h"
#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/verify.h"

namespace aotfuzz {
namespace {

ir::Module generated(int ops, std::uint64_t seed) {
  generator::GenPolicy policy = generator::with_size(generator::GenPolicy{}, ops);
  policy.targets = {{"ccompiler", 3}, {"dsp", 1}, {"default", 1}};
  policy.ops = {{"add", 3}, {"subtract", 1}, {"multiply", 1}};
  policy.max_dim = 4;
  ir::Rng rng(seed);
  return generator::generate(policy, rng);
}

// The whole pipeline (every pass verifies its input and its output).
void BM_Pipeline(benchmark::State& state) {
  const ir::Module m = generated(static_cast<int>(state.range(0)), 42);
  aot::Options options;
  options.merge = state.range(1) != 0;
  for (auto _ : state) benchmark::DoNotOptimize(aot::run_passes(m, options));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_Pipeline)
    ->ArgsProduct({{100, 1000, 10000}, {0, 1}})
    ->ArgNames({"ops", "merge"})
    ->Unit(benchmark::kMillisecond);

// One pass at a time on the previous stage's module, 10,000 ops.
void BM_SinglePass(benchmark::State& state) {
  const aot::Stages stages = aot::run_passes(generated(10000, 42));
  const auto& row = aot::pass_table()[static_cast<std::size_t>(state.range(0))];
  const ir::Module* input[] = {&stages.annotated(), &stages.at(aot::Stage::kMerge),
                               &stages.at(aot::Stage::kPartition)};
  state.SetLabel(std::string(row.name));
  for (auto _ : state) benchmark::DoNotOptimize(row.run(*input[state.range(0)], {}));
}
BENCHMARK(BM_SinglePass)->DenseRange(0, 2)->ArgName("pass")->Unit(benchmark::kMillisecond);

// verify() alone: every pass pays it twice.
void BM_Verify(benchmark::State& state) {
  const ir::Module m = generated(10000, 42);
  for (auto _ : state) ir::verify(m);
}
BENCHMARK(BM_Verify)->Unit(benchmark::kMillisecond);

// A long chain of adds alternating between two targets with one region per op, so merging works
// through long restriction sets.
void BM_AlternatingChain(benchmark::State& state) {
  auto x = ir::VarNode::make("x", ir::TypeNode::tensor({2}, ir::DType::kFloat32));
  ir::Expr prev = x;
  std::string prev_target;
  for (int i = 0; i < state.range(0); ++i) {
    const std::string t = i % 3 == 2 ? "b" : "a";
    ir::Expr in = prev_target.empty() ? prev : ir::compiler_end(prev, prev_target);
    in = ir::compiler_begin(in, t);
    prev = ir::CallNode::make(ir::Op::kAdd, {in, ir::compiler_begin(x, t)});
    prev_target = t;
  }
  ir::Module m;
  m.add("main", ir::FunctionNode::make({x}, ir::compiler_end(prev, prev_target)));
  for (auto _ : state) benchmark::DoNotOptimize(aot::run_passes(m));
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
BENCHMARK(BM_AlternatingChain)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace aotfuzz

BENCHMARK_MAIN();

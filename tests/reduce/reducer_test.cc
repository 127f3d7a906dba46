// Unit tests for the graph-aware reducer: its step table, candidate validity and progress, a
// synthetic predicate reduced to a 1-minimal graph, determinism across job counts, stopping, the
// verdict cache under hash collisions, and the #9036 seed graph reduced under the real oracle.
#include <gtest/gtest.h>

#include <set>

#include "aot/bugs.h"
#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "oracle/oracle.h"
#include "reduce/reducer.h"
#include "reduce/rewrite.h"
#include "reduce/verdict_cache.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"
#include "tests/support/modules.h"

namespace aotfuzz::reduce {
namespace {

using test_support::load;
using test_support::parse_verified;

// The candidates of `pass` for `module` that build and verify, as the reducer sees them.
std::vector<ir::Module> reduction_candidates(const ir::Module& module, ReductionPass pass) {
  std::vector<ReductionCandidate> fns;
  reduction_pass_table().at(static_cast<std::size_t>(pass)).enumerate(module, fns);
  std::vector<ir::Module> out;
  for (const auto& fn : fns) {
    try {
      ir::Module c = fn();
      ir::verify(c);
      out.push_back(std::move(c));
    } catch (const ir::Error&) {
    }
  }
  return out;
}

bool has_op(const ir::Module& m, ir::Op op) {
  for (const auto& n : ir::post_order(m.main()->body())) {
    const auto* call = ir::as<ir::CallNode>(n);
    if (call != nullptr && call->is_op(op)) return true;
  }
  return false;
}

generator::GenPolicy mixed_ops_policy() {
  generator::GenPolicy p;
  generator::set_knob(p, "ops", "add:1,multiply:1");
  generator::set_knob(p, "min_ops", "6");
  generator::set_knob(p, "max_ops", "14");
  return p;
}

// A generated graph with several ops, among them a multiply.
ir::Module graph_with_multiply(std::uint64_t first_seed) {
  for (std::uint64_t seed = first_seed;; ++seed) {
    ir::Rng rng(seed);
    ir::Module m = generator::generate(mixed_ops_policy(), rng);
    if (has_op(m, ir::Op::kMultiply) && module_size(m).ops >= 6) return m;
  }
}

reference::Value interpret(const ir::Module& m) {
  return reference::run_main(m, reference::make_inputs(m.main(), 1));
}

TEST(ReductionTable, ListsEveryPassOnceUnderAUniqueName) {
  std::set<std::string_view> names;
  for (const auto& row : reduction_pass_table()) {
    EXPECT_TRUE(names.insert(row.name).second) << row.name;
    EXPECT_FALSE(row.description.empty()) << row.name;
    EXPECT_EQ(parse_reduction_pass(row.name), row.pass);
  }
  EXPECT_EQ(names.size(), static_cast<std::size_t>(ReductionPass::kCount));
  EXPECT_FALSE(parse_reduction_pass("no-such-pass").has_value());
}

TEST(Reducer, EveryCandidateVerifiesAndStrictlyLowersComplexity) {
  generator::GenPolicy policy;
  generator::set_knob(policy, "targets", "ccompiler:3,default:1,other:1");
  generator::set_knob(policy, "p_mixed_dtypes", "0.3");
  std::size_t seen = 0;
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    ir::Rng rng(seed);
    ir::Module m = generator::generate(generator::swarm(policy, rng), rng);
    const Complexity before = complexity(m);
    for (const auto& row : reduction_pass_table()) {
      for (const auto& c : reduction_candidates(m, row.pass)) {
        ++seen;
        EXPECT_NO_THROW(ir::verify(c)) << row.name << " seed " << seed;
        EXPECT_LT(complexity(c), before) << row.name << " seed " << seed << "\n"
                                         << ir::print_module(c);
      }
    }
  }
  EXPECT_GT(seen, 100u);
}

TEST(Reducer, DropTupleFieldRenumbersTheTupleGetItemsAndKeepsTheValue) {
  ir::Module m = parse_verified(R"(
def @main(%x: Tensor[(2), float32], %y: Tensor[(2), float32]) {
  %0 = add(%x, %y);
  %1 = add(%x, %x);
  %2 = (%0, %1, %y);
  %3 = %2.2;
  %4 = %2.1;
  add(%3, %4)
})");
  auto cands = reduction_candidates(m, ReductionPass::kDropTupleField);
  // Fields 1 and 2 are used, so only field 0 can go.
  ASSERT_EQ(cands.size(), 1u);
  EXPECT_EQ(module_size(cands[0]).ops, 2u);
  EXPECT_TRUE(reference::bitwise_equal(interpret(cands[0]), interpret(m)));
}

TEST(Reducer, RemoveRegionTurnsTheRegionIntoHostCode) {
  ir::Module m = load("corpus/seed/tvm_9036_annotated.relay");
  auto cands = reduction_candidates(m, ReductionPass::kRemoveRegion);
  ASSERT_FALSE(cands.empty());
  for (const auto& c : cands) {
    EXPECT_EQ(module_size(c).ops, module_size(m).ops);
    EXPECT_LT(module_size(c).annotations, module_size(m).annotations);
    EXPECT_TRUE(reference::bitwise_equal(interpret(c), interpret(m)));
  }
}

TEST(Reducer, RemoveRegionTriesHalvesAndQuartersOfTheRegionsBeforeEachAlone) {
  // Eight independent regions, each an add of two parameters.
  std::string text = "def @main(";
  for (int i = 0; i < 16; ++i)
    text += std::string(i ? ", " : "") + "%p" + std::to_string(i) + ": Tensor[(2), float32]";
  text += ") {\n";
  std::string fields;
  for (int r = 0; r < 8; ++r) {
    const std::string a = "%p" + std::to_string(2 * r), b = "%p" + std::to_string(2 * r + 1);
    const std::string n = std::to_string(r);
    text += "  %a" + n + " = annotation.compiler_begin(" + a + ", compiler=\"ccompiler\");\n";
    text += "  %b" + n + " = annotation.compiler_begin(" + b + ", compiler=\"ccompiler\");\n";
    text += "  %s" + n + " = add(%a" + n + ", %b" + n + ");\n";
    text += "  %e" + n + " = annotation.compiler_end(%s" + n + ", compiler=\"ccompiler\");\n";
    fields += std::string(r ? ", " : "") + "%e" + n;
  }
  text += "  (" + fields + ")\n}\n";
  const ir::Module m = parse_verified(text);
  const auto cands = reduction_candidates(m, ReductionPass::kRemoveRegion);
  // Two halves, four quarters, then each of the eight alone.
  ASSERT_EQ(cands.size(), 2u + 4u + 8u);
  const std::size_t all = module_size(m).annotations;
  ASSERT_EQ(all, 8u * 3u);
  EXPECT_EQ(module_size(cands[0]).annotations, all / 2);
  EXPECT_EQ(module_size(cands[2]).annotations, all - all / 4);
  EXPECT_EQ(module_size(cands[6]).annotations, all - 3);
  for (const auto& c : cands) EXPECT_TRUE(reference::bitwise_equal(interpret(c), interpret(m)));
  // A predicate every graph keeps: the regions go in four steps (8 -> 4 -> 2 -> 1 -> 0), not eight.
  ReduceOptions only_regions;
  only_regions.passes = {ReductionPass::kRemoveRegion};
  const ReduceResult r = reduce(m, [](const ir::Module&) { return true; }, only_regions);
  EXPECT_EQ(module_size(r.module).annotations, 0u);
  EXPECT_EQ(r.steps, 4u);
}

TEST(ChunksThenSingles, GivesHalvesQuartersThenEveryIndexAloneAndOnlySinglesBelowFour) {
  using Groups = std::vector<std::vector<std::size_t>>;
  EXPECT_EQ(chunks_then_singles(0), Groups{});
  EXPECT_EQ(chunks_then_singles(3), (Groups{{0}, {1}, {2}}));
  EXPECT_EQ(chunks_then_singles(5), (Groups{{0, 1}, {2, 3, 4}, {0}, {1}, {2}, {3}, {4}}));
  const Groups eight = chunks_then_singles(8);
  ASSERT_EQ(eight.size(), 2u + 4u + 8u);
  EXPECT_EQ(eight[0], (std::vector<std::size_t>{0, 1, 2, 3}));
  EXPECT_EQ(eight[5], (std::vector<std::size_t>{6, 7}));
  for (std::size_t i = 0; i < 8; ++i) EXPECT_EQ(eight[6 + i], std::vector<std::size_t>{i});
}

TEST(Reducer, ReducesASyntheticPredicateToOneMinimalGraph) {
  ir::Module m = graph_with_multiply(1);
  std::atomic<int> calls{0};
  Predicate keep = [&](const ir::Module& c) {
    ++calls;
    return has_op(c, ir::Op::kMultiply);
  };
  ReduceOptions options;
  options.jobs = 2;
  ReduceResult r = reduce(m, keep, options);
  EXPECT_TRUE(r.minimal);
  EXPECT_TRUE(has_op(r.module, ir::Op::kMultiply));
  EXPECT_EQ(r.after.ops, 1u) << ir::print_module(r.module);
  EXPECT_EQ(r.after.inputs, 1u) << ir::print_module(r.module);
  EXPECT_EQ(r.after.annotations, 0u) << ir::print_module(r.module);
  const auto& p = r.module.main()->params().at(0);
  EXPECT_EQ(p->type()->shape(), std::vector<std::int64_t>{1});
  EXPECT_EQ(p->type()->dtype(), ir::DType::kFloat32);
  EXPECT_EQ(r.before.ops, module_size(m).ops);
  EXPECT_GT(r.steps, 0u);
  EXPECT_EQ(static_cast<std::size_t>(calls.load()), r.evaluated);
  // 1-minimal: no single candidate of any pass keeps the property.
  for (const auto& row : reduction_pass_table()) {
    for (const auto& c : reduction_candidates(r.module, row.pass)) {
      EXPECT_FALSE(complexity(c) < complexity(r.module) && has_op(c, ir::Op::kMultiply))
          << row.name << "\n"
          << ir::print_module(c);
    }
  }
}

TEST(Reducer, ShrinksShapesNoLowerThanTheMinimumRankItIsGiven) {
  const ir::Module m = test_support::parse_verified(R"(def @main(%x: Tensor[(3, 2, 4), float32],
                                                              %y: Tensor[(2, 4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = annotation.compiler_begin(%y, compiler="ccompiler");
  %2 = add(%0, %1);
  annotation.compiler_end(%2, compiler="ccompiler")
})");
  Predicate keep = [](const ir::Module& c) { return has_op(c, ir::Op::kAdd); };
  ReduceOptions options;
  options.min_rank = 2;
  const ReduceResult r = reduce(m, keep, options);
  for (const auto& p : r.module.main()->params()) {
    EXPECT_EQ(p->type()->shape(), (std::vector<std::int64_t>{1, 1})) << ir::print_module(r.module);
  }
  // Without the floor the same reduction goes down to rank 1.
  const ReduceResult free = reduce(m, keep, ReduceOptions{});
  EXPECT_EQ(free.module.main()->params().at(0)->type()->shape(), std::vector<std::int64_t>{1});
}

TEST(Reducer, ResultDoesNotDependOnTheNumberOfJobs) {
  ir::Module m = graph_with_multiply(40);
  Predicate keep = [](const ir::Module& c) {
    return has_op(c, ir::Op::kMultiply) && module_size(c).ops >= 2;
  };
  ReduceOptions one, four;
  one.jobs = 1;
  four.jobs = 4;
  ReduceResult a = reduce(m, keep, one);
  ReduceResult b = reduce(m, keep, four);
  EXPECT_EQ(ir::print_module(a.module), ir::print_module(b.module));
  EXPECT_EQ(a.steps, b.steps);
  EXPECT_EQ(a.steps_per_pass, b.steps_per_pass);
}

TEST(Reducer, KeepsTheInputWhenThePredicateDoesNotHold) {
  ir::Module m = graph_with_multiply(1);
  ReduceResult r = reduce(m, [](const ir::Module&) { return false; });
  EXPECT_TRUE(ir::structural_equal(r.module, m));
  EXPECT_EQ(r.steps, 0u);
  EXPECT_EQ(r.evaluated, 1u);
  EXPECT_FALSE(r.minimal);
}

TEST(Reducer, StopsWhenAskedAndReturnsAnInterestingModule) {
  ir::Module m = graph_with_multiply(1);
  std::atomic<bool> stop{false};
  ReduceOptions options;
  options.stop = &stop;
  options.on_step = [&](ReductionPass, const ir::Module&) { stop = true; };
  ReduceResult r = reduce(
      m, [](const ir::Module& c) { return has_op(c, ir::Op::kMultiply); }, options);
  EXPECT_FALSE(r.minimal);
  EXPECT_EQ(r.steps, 1u);
  EXPECT_TRUE(has_op(r.module, ir::Op::kMultiply));
}

TEST(Reducer, ThrowingPredicateCountsAsUninteresting) {
  ir::Module m = graph_with_multiply(1);
  int calls = 0;
  ReduceResult r = reduce(m, [&](const ir::Module& c) {
    if (calls++ > 0) throw std::runtime_error("flaky");
    return true;
  });
  EXPECT_TRUE(ir::structural_equal(r.module, m));
  EXPECT_TRUE(r.minimal);
}

TEST(VerdictCache, TwoGraphsWhoseHashesCollideKeepTheirOwnVerdicts) {
  const ir::Module a = graph_with_multiply(1);
  const ir::Module b = graph_with_multiply(100);
  ASSERT_FALSE(ir::structural_equal(a, b));
  // One key for both, as a collision of their structural hashes would give.
  const std::size_t key = 42;
  VerdictCache cache;
  cache.insert(a, key, true);
  EXPECT_EQ(cache.find(b, key), std::nullopt);
  cache.insert(b, key, false);
  EXPECT_EQ(cache.find(a, key), std::optional<bool>(true));
  EXPECT_EQ(cache.find(b, key), std::optional<bool>(false));
  // The same graph built again (nodes of its own) is the graph judged.
  EXPECT_EQ(cache.find(graph_with_multiply(1), key), std::optional<bool>(true));
  cache.insert(graph_with_multiply(1), key, false);
  EXPECT_EQ(cache.find(a, key), std::optional<bool>(false));
}

TEST(Reduce9036, KeepsTheSignatureAndEndsWithAtMostThreeAddsAndThreeInputs) {
  ir::Module m = load("corpus/seed/tvm_9036_annotated.relay");
  oracle::CaseOptions o;
  o.aot.merge = true;
  o.aot.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  const std::string sig = oracle::signature(oracle::run_case(m, o).verdict);
  ASSERT_EQ(sig, "arity:codegen:kernel");
  ReduceOptions options;
  options.jobs = 2;
  ReduceResult r = reduce(m, same_signature(o, sig), options);
  EXPECT_TRUE(r.minimal);
  EXPECT_EQ(oracle::signature(oracle::run_case(r.module, o).verdict), sig);
  EXPECT_LE(r.after.ops, 3u) << ir::print_module(r.module);
  EXPECT_LE(r.after.inputs, 3u) << ir::print_module(r.module);
  // Without the bug the reduced graph passes: it is a repro of the bug, not of something else.
  oracle::CaseOptions fixed;
  EXPECT_EQ(oracle::run_case(r.module, fixed).verdict.kind(), oracle::VerdictKind::kPass);
}

}  // namespace
}  // namespace aotfuzz::reduce

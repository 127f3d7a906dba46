// Unit tests of the IR-to-IR passes: the pass table, the staged pipeline, rejection of invalid or
// unsupported input, bug injection, FuseOps' depth limit and kernel names (very long graphs:
// long_graphs_test.cc).
#include <gtest/gtest.h>

#include <chrono>

#include "aot/codegen.h"
#include "aot/fuse_ops.h"
#include "aot/merge_compiler_regions.h"
#include "aot/partition_graph.h"
#include "aot/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/regions.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"
#include "tests/support/bugs.h"
#include "tests/support/graphs.h"

namespace aotfuzz::aot {
namespace {

ir::Module parse(const std::string& text) { return ir::parse_module(text, "test.relay"); }

const std::string kT = "Tensor[(4, 4), float32]";

// The graph of TVM issue #9036 with a subtract on the host, so the order of the region's outputs
// matters to the result.
std::string seed_with_subtract() {
  return "def @main(%x: " + kT + ", %w0: " + kT + ", %w1: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = annotation.compiler_begin(%w0, compiler="ccompiler");
  %2 = add(%0, %1);
  %3 = annotation.compiler_end(%2, compiler="ccompiler");
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = annotation.compiler_begin(%w1, compiler="ccompiler");
  %6 = add(%4, %5);
  %7 = annotation.compiler_end(%6, compiler="ccompiler");
  subtract(%3, %7)
})";
}

reference::Value run(const ir::Module& m, std::uint64_t seed = 7) {
  return reference::run_main(m, reference::make_inputs(m.main(), seed));
}

std::vector<std::string> function_names(const ir::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, fn] : m.functions()) out.push_back(name);
  return out;
}

using test_support::count_calls;
using test_support::host_chain;

TEST(PassTable, ListsMergePartitionFuseInPipelineOrder) {
  const auto& table = pass_table();
  ASSERT_GE(table.size(), 3u);
  EXPECT_EQ(table[0].name, "merge");
  EXPECT_EQ(table[1].name, "partition");
  EXPECT_EQ(table[2].name, "fuse");
  for (std::size_t i = 0; i < table.size(); ++i) {
    EXPECT_EQ(static_cast<std::size_t>(table[i].stage), i + 1);
    EXPECT_EQ(find_pass(table[i].name), &table[i]);
    EXPECT_FALSE(table[i].description.empty());
    EXPECT_FALSE(table[i].module_name.empty());
    EXPECT_NE(table[i].run, nullptr);
    EXPECT_NE(table[i].enabled, nullptr);
  }
  EXPECT_EQ(find_pass("inline"), nullptr);
}

TEST(Pipeline, WithoutMergingTheMergedStageIsTheAnnotatedModule) {
  const ir::Module m = parse(seed_with_subtract());
  Options options;
  options.merge = false;
  const Stages stages = run_passes(m, options);
  EXPECT_TRUE(ir::structural_equal(stages.at(aot::Stage::kMerge), m));
  EXPECT_EQ(function_names(stages.at(aot::Stage::kPartition)),
            (std::vector<std::string>{"main", "tvmgen_default_ccompiler_main_0",
                                      "tvmgen_default_ccompiler_main_2"}));
  options.merge = true;
  EXPECT_EQ(function_names(run_passes(m, options).at(aot::Stage::kPartition)),
            (std::vector<std::string>{"main", "tvmgen_default_ccompiler_main_0"}));
}

TEST(Pipeline, StagesAreFoundByTheirCliNames) {
  const Stages stages = run_passes(parse(seed_with_subtract()));
  ASSERT_EQ(module_stage_names().size(), pass_table().size() + 1);
  EXPECT_EQ(stages.find("annotated"), &stages.annotated());
  EXPECT_EQ(stages.find("merged"), &stages.at(aot::Stage::kMerge));
  EXPECT_EQ(stages.find("partitioned"), &stages.at(aot::Stage::kPartition));
  EXPECT_EQ(stages.find("fused"), &stages.at(aot::Stage::kFuse));
  EXPECT_EQ(stages.find("c"), nullptr);
  for (auto name : module_stage_names()) EXPECT_NE(stages.find(name), nullptr) << name;
}

TEST(Pipeline, StageListIsTheAnnotatedInputThenOneStagePerPassThenCodegenAndRun) {
  ASSERT_EQ(static_cast<std::size_t>(kNumStages), pass_table().size() + 3);
  EXPECT_EQ(stage_name(Stage::kAnnotated), "annotated");
  for (const auto& row : pass_table()) {
    EXPECT_EQ(stage_name(row.stage), row.name);
    EXPECT_EQ(parse_stage(row.name), row.stage);
  }
  EXPECT_EQ(stage_name(Stage::kCodegen), "codegen");
  EXPECT_EQ(stage_name(Stage::kRun), "run");
  EXPECT_EQ(parse_stage("merged"), std::nullopt);
}

TEST(Pipeline, ObserverSeesEachEnabledPassInOrderAndCanStopThePipeline) {
  const ir::Module m = parse(seed_with_subtract());
  Options options;
  options.merge = false;
  std::vector<Stage> seen;
  Stages stages;
  run_pipeline(m, options, stages, [&](const PassInfo& pass, const ir::Module& out) {
    seen.push_back(pass.stage);
    EXPECT_EQ(&out, &stages.at(pass.stage));
    return pass.stage != Stage::kPartition;
  });
  // Merging is disabled, and the observer stops the pipeline after partitioning.
  EXPECT_EQ(seen, (std::vector<Stage>{Stage::kPartition}));
  EXPECT_TRUE(ir::structural_equal(stages.output(), stages.at(Stage::kPartition)));
  EXPECT_FALSE(stages.failed.has_value());
}

TEST(Pipeline, PassThatThrowsIsNamedAndLaterStagesRepeatTheLastModule) {
  // A merge that makes a region reach itself through a host op: PartitionGraph refuses it, and
  // the merged module is the last stage reached.
  const ir::Module m = parse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  %3 = add(%2, %2);
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = annotation.compiler_begin(%2, compiler="ccompiler");
  %6 = add(%4, %5);
  annotation.compiler_end(%6, compiler="ccompiler")
}
)");
  Stages stages;
  EXPECT_THROW(run_pipeline(m, Options{}, stages), PassError);
  ASSERT_TRUE(stages.failed.has_value());
  EXPECT_EQ(*stages.failed, Stage::kPartition);
  EXPECT_FALSE(ir::structural_equal(stages.at(Stage::kMerge), m));
  EXPECT_TRUE(ir::structural_equal(stages.output(), stages.at(Stage::kMerge)));
}

TEST(Pipeline, EveryStagePrintsToTextThatParsesBackToIt) {
  const Stages stages = run_passes(parse(seed_with_subtract()));
  for (auto name : module_stage_names()) {
    const ir::Module& m = *stages.find(name);
    EXPECT_TRUE(ir::structural_equal(parse(ir::print_module(m)), m)) << name;
  }
}

TEST(Pipeline, ModNameIsSanitizedIntoOutlinedAndKernelNames) {
  Options options;
  options.mod_name = "my-mod";
  const Stages stages = run_passes(parse(seed_with_subtract()), options);
  EXPECT_NE(stages.at(aot::Stage::kPartition).find("tvmgen_my_mod_ccompiler_main_0"), nullptr);
  KernelNames names(stages.output(), options.mod_name);
  ASSERT_EQ(names.kernels().size(), 1u);
  EXPECT_EQ(names.kernels()[0].name, "tvmgen_my_mod_fused_subtract");
}

TEST(InvalidInput, EndWithoutRegionIsRejectedNamingTheNode) {
  const ir::Module m = parse("def @main(%x: " + kT + R"() {
  annotation.compiler_end(add(%x, %x), compiler="ccompiler")
})");
  for (const auto& row : pass_table()) {
    try {
      row.run(m, Options{});
      ADD_FAILURE() << row.name << " accepted an end without a region";
    } catch (const ir::VerifyError& e) {
      EXPECT_NE(std::string(e.what()).find("compiler_end [ccompiler]"), std::string::npos)
          << e.what();
    }
  }
  EXPECT_THROW(run_passes(m), ir::VerifyError);
}

TEST(InvalidInput, MismatchedTargetsAreRejectedNamingBoth) {
  const ir::Module m = parse("def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="a");
  annotation.compiler_end(add(%0, %0), compiler="b")
})");
  for (const auto& row : pass_table()) {
    try {
      row.run(m, Options{});
      ADD_FAILURE() << row.name << " accepted mismatched targets";
    } catch (const ir::VerifyError& e) {
      EXPECT_NE(std::string(e.what()).find("target a"), std::string::npos) << e.what();
    }
  }
}

TEST(InvalidInput, InconsistentArgumentRegionsAreRejectedNamingTheOp) {
  const ir::Module m = parse("def @main(%x: " + kT + ", %y: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="a");
  annotation.compiler_end(subtract(%0, %y), compiler="a")
})");
  for (const auto& row : pass_table()) {
    try {
      row.run(m, Options{});
      ADD_FAILURE() << row.name << " accepted inconsistent argument regions";
    } catch (const ir::VerifyError& e) {
      EXPECT_NE(std::string(e.what()).find("subtract"), std::string::npos) << e.what();
      EXPECT_NE(std::string(e.what()).find("%y"), std::string::npos) << e.what();
    }
  }
}

TEST(Partition, RefusesABeginFedByAnEndOfItsOwnRegionUnlessMerged) {
  // begin(end(%1)) joins %1's region through the add: the pair is internal to one region.
  const ir::Module m = parse("def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="a");
  %1 = add(%0, %0);
  %2 = annotation.compiler_begin(annotation.compiler_end(%1, compiler="a"), compiler="a");
  annotation.compiler_end(add(%2, %1), compiler="a")
})");
  Options options;
  options.merge = false;
  try {
    run_passes(m, options);
    ADD_FAILURE() << "accepted";
  } catch (const PassError& e) {
    EXPECT_EQ(e.pass(), "partition");
    EXPECT_EQ(e.kind(), PassError::Kind::kRejectedInput);
    EXPECT_NE(std::string(e.what()).find("its own region"), std::string::npos) << e.what();
  }
  options.merge = true;
  const Stages stages = run_passes(m, options);
  EXPECT_EQ(stages.at(aot::Stage::kPartition).size(), 2u);
  EXPECT_TRUE(reference::bitwise_equal(run(stages.output()), run(m)));
}

TEST(Partition, RefusesAnOutlinedNameThatAlreadyExists) {
  const std::string text =
      seed_with_subtract() + "\ndef @tvmgen_default_ccompiler_main_0(%a: " + kT + ") { %a }";
  try {
    partition_graph(parse(text), Options{});
    ADD_FAILURE() << "accepted";
  } catch (const PassError& e) {
    EXPECT_EQ(e.kind(), PassError::Kind::kRejectedInput);
    EXPECT_NE(std::string(e.what()).find("@tvmgen_default_ccompiler_main_0 already exists"),
              std::string::npos)
        << e.what();
  }
}

TEST(Partition, NamesFollowTvmWithSanitizedTargets) {
  EXPECT_EQ(outlined_name("default", "ccompiler", "main", 0), "tvmgen_default_ccompiler_main_0");
  EXPECT_EQ(outlined_name("default", "unsanitary-name++", "main", 3),
            "tvmgen_default_unsanitary_name___main_3");
}

// The parameter names partition_graph gives the function it outlines from one region of `target`
// reading both parameters of main.
std::vector<std::string> outlined_param_names(const std::string& target) {
  const ir::Module in = parse("def @main(%x: " + kT + ", %y: " + kT + ") { add(%x, %y) }");
  const ir::Var& x = in.main()->params()[0];
  const ir::Var& y = in.main()->params()[1];
  ir::Module m;
  m.add("main", ir::FunctionNode::make(
                    {x, y}, ir::compiler_end(
                                ir::CallNode::make(ir::Op::kAdd, {ir::compiler_begin(x, target),
                                                                  ir::compiler_begin(y, target)}),
                                target)));
  std::vector<std::string> names;
  const ir::Module outlined = partition_graph(m, Options{});
  for (const auto& [name, fn] : outlined.functions()) {
    if (name == "main") continue;
    for (const ir::Var& param : fn->params()) names.push_back(param->name());
  }
  return names;
}

TEST(Partition, NamesOutlinedParametersAfterTheRawTarget) {
  EXPECT_EQ(outlined_param_names("ccompiler"),
            (std::vector<std::string>{"ccompiler_0_i0", "ccompiler_0_i1"}));
  EXPECT_EQ(outlined_param_names("3d.acc"),  // TVM's raw target
            (std::vector<std::string>{"3d.acc_0_i0", "3d.acc_0_i1"}));
  EXPECT_EQ(outlined_param_names("a\"b"),  // no quoted name carries '"'
            (std::vector<std::string>{"a_b_0_i0", "a_b_0_i1"}));
}

TEST(Partition, AnEmptyModuleNameGivesTvmsDefaultPrefixAlone) {
  // TVM's mangle_module_name("") is "tvmgen": checked against TVM itself with --sut tvm.
  EXPECT_EQ(outlined_name("", "ccompiler", "main", 0), "tvmgen_ccompiler_main_0");
  Options options;
  options.mod_name = "";
  const Stages stages = run_passes(parse("def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  add(%2, %2)
})"),
                                   options);
  std::vector<std::string> callees;
  for (const auto& site : expected_call_arity(stages.output(), options)) {
    callees.push_back(site.callee);
  }
  EXPECT_EQ(callees, (std::vector<std::string>{"tvmgen_ccompiler_main_0", "tvmgen_fused_add"}));
}

TEST(Partition, FlattensOnlyOneLevelOfATupleEnd) {
  const ir::Module m = parse("def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="a");
  %1 = add(%0, %0);
  annotation.compiler_end(((%1, %1), %1), compiler="a")
})");
  const ir::Expr flat = flatten_tuple_outputs(m.main()->body());
  const auto* outer = ir::as<ir::TupleNode>(flat);
  ASSERT_NE(outer, nullptr);
  ASSERT_EQ(outer->fields().size(), 2u);
  for (const auto& f : outer->fields()) {
    EXPECT_EQ(ir::annotation_target(f.get()), "a");
  }
  // The inner tuple keeps one end on it, as TVM's TupleOutFlattener leaves it.
  EXPECT_NE(ir::as<ir::TupleNode>(ir::as<ir::CallNode>(outer->fields()[0])->args()[0]), nullptr);
  const Stages stages = run_passes(m);
  EXPECT_TRUE(reference::bitwise_equal(run(stages.output()), run(m)));
}

TEST(Partition, StrippingDefaultAnnotationsGivesWhatAStrippedInputGives) {
  // partition_graph takes the post order of the stripped body from the rewrite itself rather
  // than a new walk; region ids and parameter order follow that order, so a wrong one shows up
  // as a different module. Default annotations sit on shared nodes and on a region's input.
  const ir::Module m = parse("def @main(%x: " + kT + ", %y: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="default");
  %1 = annotation.compiler_begin(%y, compiler="default");
  %2 = add(%0, %1);
  %3 = annotation.compiler_end(%2, compiler="default");
  %4 = annotation.compiler_begin(%3, compiler="b");
  %5 = annotation.compiler_begin(%x, compiler="a");
  %6 = annotation.compiler_end(multiply(%5, %5), compiler="a");
  %7 = annotation.compiler_begin(%6, compiler="b");
  %8 = annotation.compiler_begin(%y, compiler="b");
  %9 = annotation.compiler_end(subtract(%7, add(%4, %8)), compiler="b");
  add(%9, %3)
})");
  ir::Module stripped;
  stripped.add("main", ir::FunctionNode::make(m.main()->params(),
                                              remove_default_annotations(m.main()->body()),
                                              m.main()->attrs(), nullptr));
  const ir::Module a = partition_graph(m, Options{});
  const ir::Module b = partition_graph(stripped, Options{});
  EXPECT_EQ(ir::print_module(a), ir::print_module(b));
  EXPECT_EQ(function_names(a), (std::vector<std::string>{"main", "tvmgen_default_a_main_0",
                                                         "tvmgen_default_b_main_1"}));
  EXPECT_TRUE(reference::bitwise_equal(run(a), run(m)));
}

TEST(Merge, LeavesACyclicMergeToPartitionGraphWhichRefusesIt) {
  const ir::Module m = parse("def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="a");
  %1 = annotation.compiler_end(add(%0, %0), compiler="a");
  %2 = subtract(%1, %1);
  %3 = multiply(annotation.compiler_begin(%1, compiler="a"), annotation.compiler_begin(%2, compiler="a"));
  annotation.compiler_end(%3, compiler="a")
})");
  // Like TVM's, the merger has no cycle check.
  EXPECT_NO_THROW(merge_compiler_regions(m, Options{}));
  try {
    run_passes(m);
    ADD_FAILURE() << "accepted";
  } catch (const PassError& e) {
    EXPECT_EQ(e.pass(), "partition");
    EXPECT_EQ(e.kind(), PassError::Kind::kRejectedInput);
    EXPECT_NE(std::string(e.what()).find("through subtract(..., ...)"), std::string::npos)
        << e.what();
    EXPECT_NE(std::string(e.what()).find("cyclic"), std::string::npos) << e.what();
  }
}

// Regions S1 and S2 of target a are siblings: both read P (target b). With `linked`, a host op
// takes S1's output into S2; otherwise S1 feeds C (target b) and C and S2 feed D (target a).
std::string siblings(bool linked) {
  const std::string head = "def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="b");
  %1 = annotation.compiler_end(add(%0, %0), compiler="b");
  %2 = annotation.compiler_begin(%1, compiler="a");
  %3 = annotation.compiler_end(multiply(%2, %2), compiler="a");
)";
  if (linked) {
    return head + R"(  %4 = annotation.compiler_begin(add(%3, %3), compiler="a");
  %5 = subtract(annotation.compiler_begin(%1, compiler="a"), %4);
  annotation.compiler_end(%5, compiler="a")
})";
  }
  return head + R"(  %4 = annotation.compiler_begin(%3, compiler="b");
  %5 = annotation.compiler_end(add(%4, %4), compiler="b");
  %6 = annotation.compiler_begin(%1, compiler="a");
  %7 = annotation.compiler_end(subtract(%6, %6), compiler="a");
  %8 = multiply(annotation.compiler_begin(%5, compiler="a"), annotation.compiler_begin(%7, compiler="a"));
  annotation.compiler_end(%8, compiler="a")
})";
}

TEST(Bugs, MergeSiblingsMergesRegionsThatOnlyShareAParent) {
  Options bugged;
  bugged.bugs.enable(Bug::kMergeSiblings);
  // A host op between the siblings: merging them makes a cyclic region with no begin/end pair
  // inside it, so the merged module is unchanged and PartitionGraph, which rebuilds the regions,
  // never sees the merge (an equivalent mutant on this graph).
  EXPECT_TRUE(ir::structural_equal(run_passes(parse(siblings(true))).at(Stage::kMerge),
                                   run_passes(parse(siblings(true)), bugged).at(Stage::kMerge)));
  // Otherwise the sibling merge is invisible in the annotations by itself, but it changes later
  // decisions: S2, now one region with S1, is restricted for D (S1 reaches D through C), so
  // S2 -> D no longer merges. Values stay the same: merges only ever drop annotations.
  const ir::Module m = parse(siblings(false));
  const Stages right = run_passes(m);
  const Stages wrong = run_passes(m, bugged);
  EXPECT_EQ(right.at(Stage::kPartition).size(), 5u);
  EXPECT_EQ(wrong.at(Stage::kPartition).size(), 6u);
  EXPECT_FALSE(ir::structural_equal(right.at(Stage::kMerge), wrong.at(Stage::kMerge)));
  EXPECT_TRUE(reference::bitwise_equal(run(wrong.output()), run(m)));
}

TEST(Bugs, MergeAcrossTargetsIgnoresTheRestrictionSets) {
  // A (a) feeds B (a) directly and through C (b).
  const ir::Module m = parse("def @main(%x: " + kT + R"() {
  %0 = annotation.compiler_begin(%x, compiler="a");
  %1 = annotation.compiler_end(add(%0, %0), compiler="a");
  %2 = annotation.compiler_begin(%1, compiler="b");
  %3 = annotation.compiler_end(multiply(%2, %2), compiler="b");
  %4 = subtract(annotation.compiler_begin(%1, compiler="a"), annotation.compiler_begin(%3, compiler="a"));
  annotation.compiler_end(%4, compiler="a")
})");
  Options options;
  EXPECT_TRUE(ir::structural_equal(run_passes(m, options).at(Stage::kMerge), m));
  options.bugs.enable(Bug::kMergeAcrossTargets);
  try {
    run_passes(m, options);
    ADD_FAILURE() << "the bug had no effect";
  } catch (const PassError& e) {
    // The merge across C makes A+B cyclic through C, which PartitionGraph refuses.
    EXPECT_EQ(e.pass(), "partition");
    EXPECT_NE(std::string(e.what()).find("region 0 [a] is cyclic"), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find("through region 1 [b]"), std::string::npos) << e.what();
  }
}

TEST(Bugs, PartitionBugsChangeWhatMainComputes) {
  const ir::Module m = parse(seed_with_subtract());
  const reference::Value expected = run(m);
  EXPECT_TRUE(reference::bitwise_equal(run(run_passes(m).output()), expected));
  for (Bug bug : {Bug::kSwappedOutputOrder, Bug::kRegionOutputOffByOne, Bug::kWrongParamDedup}) {
    Options options;
    options.bugs.enable(bug);
    const Stages stages = run_passes(m, options);
    EXPECT_TRUE(
        ir::structural_equal(stages.at(aot::Stage::kMerge), run_passes(m).at(aot::Stage::kMerge)))
        << test_support::bug_name(bug);
    EXPECT_FALSE(reference::bitwise_equal(run(stages.at(aot::Stage::kPartition)), expected))
        << test_support::bug_name(bug);
  }
}

TEST(Bugs, SwappedOutputsOfDifferentTypesMakeAnIllTypedModule) {
  // One region (the tuple joins both adds) with a float32 and an int32 output.
  const ir::Module m = parse(R"(def @main(%x: Tensor[(4, 4), float32], %y: Tensor[(4, 4), int32]) {
  %0 = annotation.compiler_begin(%x, compiler="a");
  %1 = annotation.compiler_begin(%y, compiler="a");
  %2 = (add(%0, %0), add(%1, %1));
  %3 = annotation.compiler_end(%2.0, compiler="a");
  %4 = annotation.compiler_end(%2.1, compiler="a");
  (add(%3, %x), add(%4, %y))
})");
  Options options;
  options.bugs.enable(Bug::kSwappedOutputOrder);
  EXPECT_NO_THROW(run_passes(m));
  try {
    run_passes(m, options);
    ADD_FAILURE() << "accepted";
  } catch (const PassError& e) {
    EXPECT_EQ(e.pass(), "partition");
    EXPECT_EQ(e.kind(), PassError::Kind::kBrokenOutput);
  }
}

TEST(Fuse, SplitsAChainIntoGroupsOfAtMostMaxFuseDepth) {
  // TVM counts the dominator's group plus every group up to it: a chain fuses in runs of
  // max_fuse_depth ops.
  Options options;
  options.max_fuse_depth = 4;
  const ir::Module fused = fuse_ops(host_chain(10), options);
  std::vector<std::size_t> group_sizes;
  for (const auto& node : ir::post_order(fused.main()->body())) {
    const auto* call = ir::as<ir::CallNode>(node);
    if (call == nullptr) continue;
    const auto* fn = ir::as<ir::FunctionNode>(call->callee());
    ASSERT_NE(fn, nullptr);
    EXPECT_EQ(fn->attrs().get_int("Primitive"), 1);
    group_sizes.push_back(count_calls(fn->body()));
  }
  EXPECT_EQ(group_sizes, (std::vector<std::size_t>{4, 4, 2}));
  EXPECT_TRUE(reference::bitwise_equal(run(fused), run(host_chain(10))));
  options.max_fuse_depth = 0;
  EXPECT_THROW(fuse_ops(host_chain(3), options), PassError);
}

TEST(Fuse, AGroupHasOneParameterPerDistinctInputBeyondEightInputs) {
  // Twelve inputs, two of them used again once the group has more than eight parameters (where
  // FuseOps switches from scanning the parameters to a map).
  std::vector<ir::Var> xs;
  for (int i = 0; i < 12; ++i) {
    xs.push_back(
        ir::VarNode::make("x" + std::to_string(i), ir::TypeNode::tensor({4}, ir::DType::kFloat32)));
  }
  ir::Expr e = xs[0];
  for (int i = 1; i < 12; ++i) e = ir::CallNode::make(ir::Op::kAdd, {e, xs[i]});
  e = ir::CallNode::make(ir::Op::kMultiply, {e, xs[9]});
  e = ir::CallNode::make(ir::Op::kAdd, {e, xs[3]});
  ir::Module m;
  m.add("main", ir::FunctionNode::make(xs, e));
  const ir::Module fused = fuse_ops(m, Options{});
  const auto* call = ir::as<ir::CallNode>(fused.main()->body());
  ASSERT_NE(call, nullptr);
  const auto* fn = ir::as<ir::FunctionNode>(call->callee());
  ASSERT_NE(fn, nullptr);
  EXPECT_EQ(fn->params().size(), 12u);
  ASSERT_EQ(call->args().size(), 12u);
  for (std::size_t i = 0; i < 12; ++i) {
    EXPECT_EQ(call->args()[i], xs[i]) << i;
    EXPECT_EQ(fn->params()[i]->name(), "p" + std::to_string(i));
  }
  EXPECT_TRUE(reference::bitwise_equal(run(fused), run(m)));
}

TEST(Fuse, LeavesAGroupWithoutCallsUnwrapped) {
  const ir::Module m = parse("def @main(%x: " + kT + ", %y: " + kT + ") { (%x, %y).1 }");
  const ir::Module fused = fuse_ops(m, Options{});
  EXPECT_TRUE(ir::structural_equal(fused, m)) << ir::print_module(fused);
}

TEST(KernelNames, TruncateLongNamesWithAPortableHash) {
  const ir::Module fused = fuse_ops(host_chain(19), Options{});
  const auto* call = ir::as<ir::CallNode>(fused.main()->body());
  ASSERT_NE(call, nullptr);
  const auto* fn = ir::as<ir::FunctionNode>(call->callee());
  ASSERT_NE(fn, nullptr);
  const std::string base = kernel_base_name(*fn);
  // "fused" + 19 x "_add" is 81 characters: cut to 80, then "_<decimal hash>_".
  EXPECT_EQ(
      base.substr(0, 80), std::string("fused") +
                              [] {
                                std::string s;
                                for (int i = 0; i < 19; ++i) s += "_add";
                                return s;
                              }()
                                  .substr(0, 75));
  EXPECT_EQ(base.substr(80), "_" + std::to_string([] {
                               std::string full = "fused";
                               for (int i = 0; i < 19; ++i) full += "_add";
                               std::uint64_t h = 1469598103934665603ull;
                               for (unsigned char c : full) {
                                 h ^= c;
                                 h *= 1099511628211ull;
                               }
                               return h;
                             }()) +
                                 "_");
  EXPECT_EQ(KernelNames(fused, "default").name_of(fn), "tvmgen_default_" + base);
}

TEST(KernelNames, ShareOneKernelPerStructureAmongManyOfOneType) {
  // Seven groups of two ops, all of type (T, T) -> T: six distinct kernels, the first pair again
  // at the end. More kernels of one type than KernelNames compares directly, so the structural
  // hashes decide which pairs are compared.
  const ir::Op ops[] = {ir::Op::kAdd,      ir::Op::kMultiply, ir::Op::kSubtract, ir::Op::kAdd,
                        ir::Op::kMultiply, ir::Op::kSubtract, ir::Op::kAdd,      ir::Op::kAdd,
                        ir::Op::kMultiply, ir::Op::kMultiply, ir::Op::kSubtract, ir::Op::kSubtract,
                        ir::Op::kAdd,      ir::Op::kMultiply};
  // Starting from %y, the first group takes two parameters like every other.
  auto x = ir::VarNode::make("x", ir::TypeNode::tensor({4}, ir::DType::kFloat32));
  auto y = ir::VarNode::make("y", ir::TypeNode::tensor({4}, ir::DType::kFloat32));
  ir::Expr e = y;
  for (ir::Op op : ops) e = ir::CallNode::make(op, {e, x});
  ir::Module m;
  m.add("main", ir::FunctionNode::make({x, y}, e));
  Options options;
  options.max_fuse_depth = 2;
  const ir::Module fused = fuse_ops(m, options);
  KernelNames names(fused, "default");
  std::vector<std::string> kernel_names;
  for (const auto& k : names.kernels()) kernel_names.push_back(k.name);
  // Lowered from the root: the last group first.
  EXPECT_EQ(kernel_names, (std::vector<std::string>{
                              "tvmgen_default_fused_add_multiply",
                              "tvmgen_default_fused_subtract_subtract",
                              "tvmgen_default_fused_multiply_multiply",
                              "tvmgen_default_fused_add_add",
                              "tvmgen_default_fused_multiply_subtract",
                              "tvmgen_default_fused_subtract_add",
                          }));
  std::vector<std::string> call_names;
  for (const auto& node : ir::post_order(fused.main()->body())) {
    const auto* call = ir::as<ir::CallNode>(node);
    if (call == nullptr) continue;
    call_names.push_back(names.name_of(ir::as<ir::FunctionNode>(call->callee())));
  }
  EXPECT_EQ(call_names.size(), 7u);
  EXPECT_EQ(call_names.front(), call_names.back());
  EXPECT_TRUE(reference::bitwise_equal(run(fused), run(m)));
}

TEST(KernelNames, RefuseAFunctionThatIsNotAKernelOfTheModule) {
  const ir::Module fused = fuse_ops(host_chain(2), Options{});
  auto p = ir::VarNode::make("p", ir::TypeNode::tensor({4}, ir::DType::kFloat32));
  auto other = ir::FunctionNode::make({p}, ir::CallNode::make(ir::Op::kAdd, {p, p}),
                                      ir::Attrs{{"Primitive", std::int64_t{1}}});
  EXPECT_THROW(KernelNames(fused, "default").name_of(other.get()), PassError);
}

TEST(KernelNames, ShareOneKernelBetweenStructurallyEqualFunctions) {
  const ir::Module m = parse("def @main(%x: " + kT + ", %y: " + kT +
                             ") { (add(%x, %x), add(%y, %y), multiply(%x, %y)) }");
  const ir::Module fused = fuse_ops(m, Options{});
  KernelNames names(fused, "default");
  ASSERT_EQ(names.kernels().size(), 2u);
  EXPECT_EQ(names.kernels()[0].name, "tvmgen_default_fused_add");
  EXPECT_EQ(names.kernels()[1].name, "tvmgen_default_fused_multiply");
  std::vector<std::string> per_call;
  for (const auto& f : ir::as<ir::TupleNode>(fused.main()->body())->fields()) {
    per_call.push_back(names.name_of(ir::as<ir::FunctionNode>(ir::as<ir::CallNode>(f)->callee())));
  }
  EXPECT_EQ(per_call,
            (std::vector<std::string>{"tvmgen_default_fused_add", "tvmgen_default_fused_add",
                                      "tvmgen_default_fused_multiply"}));
}

}  // namespace
}  // namespace aotfuzz::aot

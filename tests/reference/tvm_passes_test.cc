// The reference passes (reference/tvm_passes.h) on graphs whose TVM v0.8 treatment is known from
// TVM's source: where TVM refuses or recurses forever, the names it gives, the shapes it fuses.
#include "reference/tvm_passes.h"

#include <gtest/gtest.h>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/traversal.h"
#include "tests/support/modules.h"

namespace aotfuzz::reference {
namespace {

ir::Module parse(const std::string& text) { return ir::parse_module(text, "test.relay"); }

// Region A feeds the host add %3 and, through a begin, region B, whose only end is on a tuple
// (corpus/conformance/merge_cycle_through_tuple_end.relay).
const char* kCycleThroughTupleEnd = R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  %3 = add(%2, %2);
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = annotation.compiler_begin(%2, compiler="ccompiler");
  %6 = (%4, %5);
  annotation.compiler_end(%6, compiler="ccompiler")
})";

std::vector<std::string> function_names(const ir::Module& m) {
  std::vector<std::string> names;
  for (const auto& [name, fn] : m.functions()) names.push_back(name);
  return names;
}

TEST(ReferencePasses, TheMergerHasNoCycleCheckAndPartitionGraphSplitsTheTupleEnd) {
  const ir::Module merged = merge_compiler_regions(parse(kCycleThroughTupleEnd));
  // A's end and B's begin on it are one region now: the pair is gone.
  EXPECT_EQ(ir::print_module(merged).find("compiler_begin(%2"), std::string::npos);
  const ir::Module partitioned = partition_graph(merged, "default");
  EXPECT_EQ(function_names(partitioned),
            (std::vector<std::string>{"main", "tvmgen_default_ccompiler_main_0",
                                      "tvmgen_default_ccompiler_main_1"}));
  for (const auto& [name, fn] : partitioned.functions()) {
    if (name != "main") {
      EXPECT_EQ(fn->params().size(), 1u) << name;
    }
  }
}

TEST(ReferencePasses, PartitionGraphRecursesForeverOnARegionStillCyclic) {
  // The end is on a plain add, not a tuple: the merged region stays cyclic through %3.
  const ir::Module merged = merge_compiler_regions(parse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  %3 = add(%2, %2);
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = annotation.compiler_begin(%2, compiler="ccompiler");
  %6 = add(%4, %5);
  annotation.compiler_end(%6, compiler="ccompiler")
})"));
  try {
    partition_graph(merged, "default");
    ADD_FAILURE() << "partitioned a cyclic region";
  } catch (const TvmRefuses& e) {
    EXPECT_NE(std::string(e.what()).find("recurses forever in PartitionGraph"), std::string::npos)
        << e.what();
  }
}

TEST(ReferencePasses, AnEndWithoutARegionIsWhatTvmThrowsOn) {
  EXPECT_THROW(partition_graph(parse(R"(
def @main(%x: Tensor[(4), float32]) {
  annotation.compiler_end(add(%x, %x), compiler="ccompiler")
})"),
                               "default"),
               TvmRefuses);
}

TEST(ReferencePasses, ParameterNamesKeepTheRawTargetWhileFunctionNamesAreSanitized) {
  const ir::Module partitioned = partition_graph(parse(R"(
def @main(%x: Tensor[(4), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="my.target");
  annotation.compiler_end(add(%0, %0), compiler="my.target")
})"),
                                                 "default");
  const ir::Function* fn = partitioned.find("tvmgen_default_my_target_main_0");
  ASSERT_NE(fn, nullptr) << ir::print_module(partitioned);
  EXPECT_EQ((*fn)->params()[0]->name(), "my.target_0_i0");
  EXPECT_EQ((*fn)->attrs().get_string("Compiler"), "my.target");
}

TEST(ReferencePasses, AnEmptyModuleNameGivesTheBareTvmgenPrefix) {
  const ir::Module partitioned = partition_graph(test_support::seed_9036(), "");
  EXPECT_NE(partitioned.find("tvmgen_ccompiler_main_0"), nullptr) << ir::print_module(partitioned);
}

TEST(ReferencePasses, FuseOpsGivesTheSeedGraphAKernelThatTakesTheWholeTuple) {
  // #9036: after merging, the external function returns two tensors; the host add reads both,
  // and FuseOps fuses the two projections into it, so the kernel's one parameter is the tuple.
  const ir::Module fused =
      fuse_ops(partition_graph(merge_compiler_regions(test_support::seed_9036()), "default"));
  bool tuple_param = false;
  for (const auto& node : ir::post_order(fused.main()->body())) {
    const auto* call = ir::as<ir::CallNode>(node);
    if (call == nullptr || !call->callee()) continue;
    if (const auto* fn = ir::as<ir::FunctionNode>(call->callee())) {
      EXPECT_EQ(fn->attrs().get_int("Primitive"), 1);
      for (const auto& p : fn->params()) tuple_param = tuple_param || !p->type()->is_tensor();
    }
  }
  EXPECT_TRUE(tuple_param) << ir::print_module(fused);
}

TEST(ReferencePasses, FuseOpsRespectsTheMaximumDepth) {
  const ir::Module m = parse(R"(
def @main(%x: Tensor[(4), float32]) {
  add(add(add(%x, %x), %x), %x)
})");
  auto kernels = [](const ir::Module& fused) {
    int n = 0;
    for (const auto& node : ir::post_order(fused.main()->body())) {
      const auto* call = ir::as<ir::CallNode>(node);
      n += call != nullptr && call->callee() && call->callee()->kind() == ir::ExprKind::kFunction;
    }
    return n;
  };
  EXPECT_EQ(kernels(fuse_ops(m)), 1);
  EXPECT_EQ(kernels(fuse_ops(m, 1)), 3);
  EXPECT_THROW(fuse_ops(m, 0), TvmRefuses);
}

TEST(ReferencePasses, ALongChainNeedsNoMoreThanTheCallersStack) {
  // The passes recurse over the graph; a long graph runs on a thread sized for it.
  std::string text = "def @main(%x: Tensor[(2), float32]) {\n  %0 = annotation.compiler_begin(%x, compiler=\"ccompiler\");\n";
  const int n = 20000;
  for (int i = 1; i <= n; ++i) {
    text += "  %" + std::to_string(i) + " = add(%" + std::to_string(i - 1) + ", %" +
            std::to_string(i - 1) + ");\n";
  }
  text += "  annotation.compiler_end(%" + std::to_string(n) + ", compiler=\"ccompiler\")\n}\n";
  const ir::Module fused = fuse_ops(partition_graph(merge_compiler_regions(parse(text)), "x"));
  EXPECT_NE(fused.find("tvmgen_x_ccompiler_main_0"), nullptr);
}

}  // namespace
}  // namespace aotfuzz::reference

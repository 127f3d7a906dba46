// Unit tests of storage planning: storage ids per flattened tensor, outputs in the user's
// buffers, copies for pass-through and repeated outputs, liveness-based reuse, and the storage
// bug switches.
#include <gtest/gtest.h>

#include <map>

#include "aot/codegen_error.h"
#include "aot/storage_plan.h"
#include "tests/support/modules.h"

namespace aotfuzz::aot {
namespace {

using test_support::fused_of;
using test_support::parse_verified;
using test_support::seed_9036;

constexpr const char* kT = "Tensor[(4, 4), float32]";

// A local primitive function of two (4, 4) floats applying `op`.
std::string prim(const std::string& op) {
  return std::string("fn (%p0: ") + kT + ", %p1: " + kT + ", Primitive=1) { " + op + "(%p0, %p1) }";
}

// x, y -> a = x + y; b = a * x; c = b - y; out = c + x: each intermediate dies at its only use.
std::string chain_module() {
  return std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +  //
         "  %0 = " + prim("add") + ";\n" +                               //
         "  %1 = %0(%x, %y);\n" +                                        //
         "  %2 = " + prim("multiply") + ";\n" +                          //
         "  %3 = %2(%1, %x);\n" +                                        //
         "  %4 = " + prim("subtract") + ";\n" +                          //
         "  %5 = %4(%3, %y);\n" +                                        //
         "  %6 = " + prim("add") + ";\n" +                               //
         "  %6(%5, %x)\n}\n";
}

// a = x + y; b = a * x; c = b - y; out = a + c: `a` is still live when `c` is computed.
std::string diamond_module() {
  return std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +  //
         "  %0 = " + prim("add") + ";\n" +                               //
         "  %1 = %0(%x, %y);\n" +                                        //
         "  %2 = " + prim("multiply") + ";\n" +                          //
         "  %3 = %2(%1, %x);\n" +                                        //
         "  %4 = " + prim("subtract") + ";\n" +                          //
         "  %5 = %4(%3, %y);\n" +                                        //
         "  %6 = " + prim("add") + ";\n" +                               //
         "  %6(%1, %5)\n}\n";
}

// a = x + y; o0 = a * x; o1 = a - y; returns (o0, o1).
std::string two_outputs_module() {
  return std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +  //
         "  %0 = " + prim("add") + ";\n" +                               //
         "  %1 = %0(%x, %y);\n" +                                        //
         "  %2 = " + prim("multiply") + ";\n" +                          //
         "  %3 = %2(%1, %x);\n" +                                        //
         "  %4 = " + prim("subtract") + ";\n" +                          //
         "  %5 = %4(%1, %y);\n" +                                        //
         "  (%3, %5)\n}\n";
}

// out = x + y returned twice, and x itself as a third output.
std::string repeated_outputs_module() {
  return std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +  //
         "  %0 = " + prim("add") + ";\n" +                               //
         "  %1 = %0(%x, %y);\n" +                                        //
         "  (%1, %1, %x)\n}\n";
}

// Whether every value a step reads is still in its buffer: no step between the value's producer
// and the reader writes that buffer. Values are traced through the IR (call arguments that are
// calls, or TupleGetItems of calls), independently of how the plan numbered its buffers.
bool no_buffer_overwritten_before_read(const StoragePlan& plan) {
  std::map<const ir::ExprNode*, int> step_of;
  for (std::size_t s = 0; s < plan.steps.size(); ++s)
    step_of[plan.steps[s].call.get()] = static_cast<int>(s);
  for (std::size_t s = 0; s < plan.steps.size(); ++s) {
    const auto& args = plan.steps[s].call->args();
    for (std::size_t a = 0; a < args.size(); ++a) {
      const ir::ExprNode* producer = args[a].get();
      if (const auto* tgi = ir::as<ir::TupleGetItemNode>(producer)) producer = tgi->tuple().get();
      auto it = step_of.find(producer);
      if (it == step_of.end()) continue;  // an input of main
      for (const auto& ref : plan.steps[s].args[a]) {
        for (int q = it->second + 1; q < static_cast<int>(s); ++q) {
          for (const auto& r : plan.steps[q].results) {
            if (r.buffer == ref.buffer) return false;
          }
        }
      }
    }
  }
  return true;
}

TEST(StoragePlan, GivesEachFlattenedResultItsOwnStorageAndATupleArgumentEveryField) {
  const ir::Module fused = fused_of(seed_9036());
  const StoragePlan plan = plan_storage(fused.main());
  ASSERT_EQ(plan.inputs.size(), 3u);
  ASSERT_EQ(plan.outputs.size(), 1u);
  ASSERT_EQ(plan.steps.size(), 2u);
  // The external call: 3 inputs, 2 results in distinct intermediates.
  const CallStep& ext = plan.steps[0];
  ASSERT_EQ(ext.args.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(ext.args[i].size(), 1u);
    EXPECT_EQ(ext.args[i][0].buffer, (BufferRef{BufferKind::kInput, i}));
  }
  ASSERT_EQ(ext.results.size(), 2u);
  EXPECT_EQ(ext.results[0].buffer.kind, BufferKind::kIntermediate);
  EXPECT_EQ(ext.results[1].buffer.kind, BufferKind::kIntermediate);
  EXPECT_NE(ext.results[0].buffer, ext.results[1].buffer);
  // The fused add takes the whole tuple as one argument: both fields' storage, in order.
  const CallStep& add = plan.steps[1];
  ASSERT_EQ(add.args.size(), 1u);
  ASSERT_EQ(add.args[0].size(), 2u);
  EXPECT_EQ(add.args[0][0].buffer, ext.results[0].buffer);
  EXPECT_EQ(add.args[0][1].buffer, ext.results[1].buffer);
  // The model output is computed straight into the user's buffer.
  ASSERT_EQ(add.results.size(), 1u);
  EXPECT_EQ(add.results[0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_TRUE(plan.copies.empty());
  EXPECT_EQ(plan.buffers.size(), 2u);
  EXPECT_EQ(plan.workspace_bytes, 800u);
}

TEST(StoragePlan, ConstantsAreReadOnlyBuffersOfTheirOwnAndAConstantOutputIsACopy) {
  // A constant read by a kernel, the same constant returned, and a scalar constant twice.
  const ir::Module fused = parse_verified(std::string("def @main(%x: ") + kT + ") {\n" +
                                          "  %0 = const(Tensor[(4), float32], [1, 2, 3, 4]);\n" +
                                          "  %1 = " + prim("add") + ";\n" +
                                          "  %2 = const(Tensor[(4, 4), float32], [" +
                                          "1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16]);\n" +
                                          "  %3 = %1(%x, %2);\n" +
                                          "  %4 = const(float32, [7]);\n" +
                                          "  (%3, %2, %4, %4)\n}\n");
  const StoragePlan plan = plan_storage(fused.main());
  ASSERT_EQ(plan.constants.size(), 2u);  // the unused (4) constant is not in @main's body
  EXPECT_EQ(plan.constants[0]->values().size(), 16u);
  ASSERT_EQ(plan.steps.size(), 1u);
  EXPECT_EQ(to_string(plan.steps[0].args[1][0].buffer), "constant 0");
  EXPECT_EQ(plan.steps[0].results[0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_TRUE(plan.buffers.empty());
  EXPECT_EQ(plan.workspace_bytes, 0u);
  ASSERT_EQ(plan.copies.size(), 3u);
  EXPECT_EQ(plan.copies[0].output, 1);
  EXPECT_EQ(plan.copies[0].source.buffer, (BufferRef{BufferKind::kConstant, 0}));
  EXPECT_EQ(plan.copies[1].output, 2);
  EXPECT_EQ(plan.copies[1].source.buffer, (BufferRef{BufferKind::kConstant, 1}));
  // The repeat copies the earlier output, as a repeated call result does.
  EXPECT_EQ(plan.copies[2].output, 3);
  EXPECT_EQ(plan.copies[2].source.buffer, (BufferRef{BufferKind::kOutput, 2}));
}

TEST(StoragePlan, ReuseNeedsFewerBuffersOnAChainThanOneBufferPerTensor) {
  const ir::Module m = parse_verified(chain_module());
  StorageOptions no_reuse;
  no_reuse.reuse = false;
  const StoragePlan plain = plan_storage(m.main(), no_reuse);
  const StoragePlan reused = plan_storage(m.main());
  EXPECT_EQ(plain.num_intermediate_tensors, 3u);
  EXPECT_EQ(plain.buffers.size(), 3u);
  EXPECT_EQ(reused.num_intermediate_tensors, 3u);
  EXPECT_LT(reused.buffers.size(), plain.buffers.size());
  EXPECT_LT(reused.workspace_bytes, plain.workspace_bytes);
  EXPECT_TRUE(no_buffer_overwritten_before_read(reused));
  EXPECT_TRUE(no_buffer_overwritten_before_read(plain));
}

TEST(StoragePlan, NeverReusesABufferWhileItsTensorIsStillRead) {
  const ir::Module m = parse_verified(diamond_module());
  const StoragePlan plan = plan_storage(m.main());
  EXPECT_TRUE(no_buffer_overwritten_before_read(plan));
  // `a` (step 0) is read by the last step: nothing else may share its buffer.
  const BufferRef a = plan.steps[0].results[0].buffer;
  EXPECT_EQ(plan.steps[3].args[0][0].buffer, a);
  EXPECT_NE(plan.steps[2].results[0].buffer, a);
}

TEST(StoragePlan, ReuseLiveStorageBugReusesABufferThatIsStillRead) {
  const ir::Module m = parse_verified(diamond_module());
  StorageOptions options;
  options.bugs.enable(Bug::kReuseLiveStorage);
  const StoragePlan plan = plan_storage(m.main(), options);
  EXPECT_FALSE(no_buffer_overwritten_before_read(plan));
  EXPECT_EQ(plan.steps[2].results[0].buffer, plan.steps[0].results[0].buffer);
}

TEST(StoragePlan, IntermediatesNeverGoIntoInputOrOutputBuffers) {
  for (const std::string& text : {chain_module(), diamond_module(), two_outputs_module()}) {
    const StoragePlan plan = plan_storage(parse_verified(text).main());
    for (std::size_t s = 0; s + 1 < plan.steps.size(); ++s) {
      for (const auto& r : plan.steps[s].results) {
        // Only the values main returns live in output buffers.
        if (r.buffer.kind == BufferKind::kOutput) continue;
        EXPECT_EQ(r.buffer.kind, BufferKind::kIntermediate);
      }
    }
    // No step writes an input.
    for (const auto& step : plan.steps) {
      for (const auto& r : step.results) EXPECT_NE(r.buffer.kind, BufferKind::kInput);
    }
  }
}

TEST(StoragePlan, IntermediateInOutputBugPlacesALiveIntermediateInALaterOutput) {
  const ir::Module m = parse_verified(two_outputs_module());
  const StoragePlan good = plan_storage(m.main());
  EXPECT_EQ(good.steps[0].results[0].buffer.kind, BufferKind::kIntermediate);
  StorageOptions options;
  options.bugs.enable(Bug::kIntermediateInOutput);
  const StoragePlan bad = plan_storage(m.main(), options);
  // `a` goes into output 0, which step 1 writes while step 2 still reads `a`.
  EXPECT_EQ(bad.steps[0].results[0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_EQ(bad.steps[1].results[0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_EQ(bad.steps[2].args[0][0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_TRUE(no_buffer_overwritten_before_read(good));
  EXPECT_FALSE(no_buffer_overwritten_before_read(bad));
}

TEST(StoragePlan, RepeatedAndPassThroughOutputsBecomeCopies) {
  const ir::Module m = parse_verified(repeated_outputs_module());
  const StoragePlan plan = plan_storage(m.main());
  ASSERT_EQ(plan.outputs.size(), 3u);
  EXPECT_EQ(plan.steps[0].results[0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_EQ(plan.copies[0].output, 1);
  EXPECT_EQ(plan.copies[0].source.buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_EQ(plan.copies[1].output, 2);
  EXPECT_EQ(plan.copies[1].source.buffer, (BufferRef{BufferKind::kInput, 0}));
}

TEST(StoragePlan, DroppedDuplicateOutputBugOmitsTheCopyOfTheRepeat) {
  const ir::Module m = parse_verified(repeated_outputs_module());
  StorageOptions options;
  options.bugs.enable(Bug::kDroppedDuplicateOutput);
  const StoragePlan plan = plan_storage(m.main(), options);
  ASSERT_EQ(plan.copies.size(), 1u);
  EXPECT_EQ(plan.copies[0].output, 2);
}

TEST(StoragePlan, FlattensTupleParametersAndTupleResults) {
  const std::string tt = std::string("(") + kT + ", " + kT + ")";
  const ir::Module m = parse_verified(std::string("def @main(%t: ") + tt + ", %z: " + kT + ") {\n" +
                                      "  %0 = fn (%p0: " + tt + ", %p1: " + kT +
                                      ", Primitive=1) { %1 = %p0.1; %2 = add(%1, %p1); (%2, %p1) "
                                      "};\n" +
                                      "  %3 = %0(%t, %z);\n" + "  (%3, %t)\n}\n");
  const StoragePlan plan = plan_storage(m.main());
  ASSERT_EQ(plan.inputs.size(), 3u);
  ASSERT_EQ(plan.outputs.size(), 4u);
  ASSERT_EQ(plan.steps.size(), 1u);
  ASSERT_EQ(plan.steps[0].args.size(), 2u);
  EXPECT_EQ(plan.steps[0].args[0].size(), 2u);
  EXPECT_EQ(plan.steps[0].args[0][1].buffer, (BufferRef{BufferKind::kInput, 1}));
  EXPECT_EQ(plan.steps[0].args[1][0].buffer, (BufferRef{BufferKind::kInput, 2}));
  EXPECT_EQ(plan.steps[0].results[0].buffer, (BufferRef{BufferKind::kOutput, 0}));
  EXPECT_EQ(plan.steps[0].results[1].buffer, (BufferRef{BufferKind::kOutput, 1}));
  ASSERT_EQ(plan.copies.size(), 2u);
  EXPECT_EQ(plan.copies[0].source.buffer, (BufferRef{BufferKind::kInput, 0}));
  EXPECT_EQ(plan.copies[1].source.buffer, (BufferRef{BufferKind::kInput, 1}));
}

TEST(StoragePlan, WorkspaceOffsetsAreAlignedAndDoNotOverlap) {
  const std::string small = "Tensor[(3), int8]";
  const ir::Module m = parse_verified(
      std::string("def @main(%x: ") + small + ", %y: " + kT + ") {\n" + "  %0 = fn (%p0: " + small +
      ", Primitive=1) { add(%p0, %p0) };\n" +                            //
      "  %1 = %0(%x);\n" +                                               //
      "  %2 = fn (%p0: " + kT + ", Primitive=1) { add(%p0, %p0) };\n" +  //
      "  %3 = %2(%y);\n" +                                               //
      "  %4 = fn (%p0: " + small + ", %p1: " + kT + ", Primitive=1) { %5 = add(%p0, %p0); " +
      "%6 = add(%p1, %p1); (%5, %6) };\n" +  //
      "  %4(%1, %3)\n}\n");
  StorageOptions options;
  options.alignment = 32;
  const StoragePlan plan = plan_storage(m.main(), options);
  ASSERT_EQ(plan.buffers.size(), 2u);
  std::size_t end = 0;
  for (const auto& b : plan.buffers) {
    EXPECT_EQ(b.offset % 32, 0u);
    EXPECT_GE(b.offset, end);
    end = b.offset + b.bytes;
  }
  EXPECT_EQ(plan.buffers[0].bytes, 3u);
  EXPECT_EQ(plan.buffers[1].bytes, 64u);
  EXPECT_EQ(plan.workspace_bytes, 32u + 64u);
}

TEST(StoragePlan, PlansAreDeterministic) {
  const ir::Module m = parse_verified(diamond_module());
  const StoragePlan a = plan_storage(m.main());
  const StoragePlan b = plan_storage(parse_verified(diamond_module()).main());
  ASSERT_EQ(a.steps.size(), b.steps.size());
  for (std::size_t s = 0; s < a.steps.size(); ++s) {
    for (std::size_t r = 0; r < a.steps[s].results.size(); ++r) {
      EXPECT_EQ(a.steps[s].results[r].buffer, b.steps[s].results[r].buffer);
    }
  }
  EXPECT_EQ(a.workspace_bytes, b.workspace_bytes);
}

TEST(StoragePlan, RejectsAnOperatorCalledDirectlyInMain) {
  const ir::Module m = parse_verified(std::string("def @main(%x: ") + kT + ") { add(%x, %x) }\n");
  try {
    plan_storage(m.main());
    FAIL() << "expected CodegenError";
  } catch (const CodegenError& e) {
    EXPECT_NE(std::string(e.what()).find("add"), std::string::npos) << e.what();
  }
}

TEST(StoragePlan, RejectsANonPowerOfTwoAlignment) {
  StorageOptions options;
  options.alignment = 24;
  EXPECT_THROW(plan_storage(parse_verified(chain_module()).main(), options), CodegenError);
}

}  // namespace
}  // namespace aotfuzz::aot

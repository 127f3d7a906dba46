// The workspace oracle (oracle/workspace.h): silent on the planner's own programs, a verdict for
// a program that opens a buffer while a dead one would do.
#include <gtest/gtest.h>

#include "aot/executor_program.h"
#include "oracle/case_flow.h"
#include "oracle/workspace.h"
#include "tests/support/modules.h"

namespace aotfuzz::oracle {
namespace {

// Five calls in a chain: ccompiler, kernel, ccompiler, kernel, ccompiler. The first result is
// dead once the first kernel has read it, so the third call's result can take its buffer.
constexpr const char* kChain = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(8), float32]) -> Tensor[(8), float32] {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  %3 = add(%2, %x);
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = add(%4, %4);
  %6 = annotation.compiler_end(%5, compiler="ccompiler");
  %7 = add(%6, %x);
  %8 = annotation.compiler_begin(%7, compiler="ccompiler");
  %9 = add(%8, %8);
  annotation.compiler_end(%9, compiler="ccompiler")
}
)";

aot::ExecutorProgram chain_program(bool reuse = true) {
  aot::Options options;
  options.storage_reuse = reuse;
  return aot::build_executor_program(test_support::fused_of(test_support::parse_verified(kChain)),
                                     options);
}

// Every result slot in call order, as (call, slot) pairs of `program`.
std::vector<std::pair<std::size_t, std::size_t>> result_slots(const aot::ExecutorProgram& p) {
  std::vector<std::pair<std::size_t, std::size_t>> out;
  for (std::size_t s = 0; s < p.calls.size(); ++s) {
    for (std::size_t k = p.calls[s].callee_inputs.size(); k < p.calls[s].slots.size(); ++k) {
      out.emplace_back(s, k);
    }
  }
  return out;
}

TEST(WorkspaceOracle, IsSilentOnAPlanThatReusesTheDeadBuffer) {
  const aot::ExecutorProgram p = chain_program();
  ASSERT_EQ(p.calls.size(), 5u);
  // Four intermediates in two buffers: the planner reused one.
  EXPECT_EQ(p.buffers.size(), 2u);
  EXPECT_FALSE(check_workspace_reuse(p));
}

// Moves the n-th result (in call order) of `p` to a new buffer of `bytes` bytes, and its readers
// with it, as a planner that never frees would place it. Returns the buffer it left.
aot::BufferRef move_to_new_buffer(aot::ExecutorProgram& p, std::size_t n, std::size_t bytes) {
  const auto [s, k] = result_slots(p)[n];
  const aot::BufferRef old = p.calls[s].slots[k].buffer;
  EXPECT_EQ(old.kind, aot::BufferKind::kIntermediate);
  const int fresh = static_cast<int>(p.buffers.size());
  p.buffers.push_back(aot::WorkspaceBuffer{fresh, bytes, 0});
  p.calls[s].slots[k].buffer.index = fresh;
  for (std::size_t later = s + 1; later < p.calls.size(); ++later) {
    for (std::size_t j = 0; j < p.calls[later].callee_inputs.size(); ++j) {
      if (p.calls[later].slots[j].buffer == old) p.calls[later].slots[j].buffer.index = fresh;
    }
  }
  return old;
}

TEST(WorkspaceOracle, NamesTheNewBufferAndTheDeadOneWhenADeadBufferIsNotReused) {
  aot::ExecutorProgram p = chain_program();
  ASSERT_EQ(result_slots(p)[2].first, 2u);
  const int fresh = static_cast<int>(p.buffers.size());
  const aot::BufferRef old = move_to_new_buffer(p, 2, 32);
  const auto v = check_workspace_reuse(p);
  ASSERT_TRUE(v);
  EXPECT_EQ(signature(*v), "workspace-oversized:codegen");
  const auto& d = std::get<WorkspaceOversized>(v->detail);
  EXPECT_EQ(d.call, 3);
  EXPECT_EQ(d.callee, p.calls[2].callee);
  EXPECT_EQ(d.sid, fresh);
  EXPECT_EQ(d.bytes, 32u);
  EXPECT_EQ(d.dead_sid, old.index);
  EXPECT_EQ(d.dead_since, 2);  // read last by the first kernel
}

TEST(WorkspaceOracle, CountsABufferReadByTheOpeningCallAsLive) {
  const aot::ExecutorProgram p = chain_program();
  // The second call opens a buffer while the only older one holds its own input.
  const auto [s, k] = result_slots(p)[1];
  ASSERT_EQ(s, 1u);
  EXPECT_EQ(p.calls[1].slots[0].buffer, (aot::BufferRef{aot::BufferKind::kIntermediate, 0}));
  EXPECT_EQ(p.calls[1].slots[k].buffer, (aot::BufferRef{aot::BufferKind::kIntermediate, 1}));
  EXPECT_FALSE(check_workspace_reuse(p));
}

TEST(WorkspaceOracle, IgnoresADeadBufferTooSmallForTheNewTensor) {
  aot::ExecutorProgram p = chain_program();
  // One byte more than any older buffer: none of them could have held it.
  move_to_new_buffer(p, 2, 33);
  EXPECT_FALSE(check_workspace_reuse(p));
}

TEST(WorkspaceOracle, LeavesProgramsWithTheWrongSlotCountToTheArityCheck) {
  aot::ExecutorProgram p = chain_program(/*reuse=*/false);
  // Without reuse every result has its own buffer, which the check would report...
  ASSERT_EQ(p.buffers.size(), 4u);
  ASSERT_TRUE(check_workspace_reuse(p));
  // ...unless a call's slots are not its callee's arity.
  p.calls[4].slots.pop_back();
  EXPECT_FALSE(check_workspace_reuse(p));
}

TEST(WorkspaceOracle, IsLeftOutWithStorageReuseOff) {
  const ir::Module m = test_support::parse_verified(kChain);
  CaseOptions options;
  options.in_process_only = true;
  options.aot.storage_reuse = false;
  CaseResult r;
  EXPECT_FALSE(prepare_case(m, options, r));
  EXPECT_EQ(r.verdict.kind(), VerdictKind::kPass) << summary(r.verdict);
  options.aot.storage_reuse = true;
  CaseResult again;
  EXPECT_FALSE(prepare_case(m, options, again));
  EXPECT_EQ(again.verdict.kind(), VerdictKind::kPass) << summary(again.verdict);
}

}  // namespace
}  // namespace aotfuzz::oracle

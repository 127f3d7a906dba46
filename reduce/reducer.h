// The graph-aware test-case reducer: shrinks an annotated module by whole-graph steps (the table
// in reduce/reduction_passes.def) while a predicate (usually "run_case gives the same verdict
// signature") still holds, down to a 1-minimal module.
#pragma once

#include <array>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "oracle/oracle.h"
#include "reduce/reductions.h"

namespace aotfuzz::reduce {

/// One enumerator per row of reduction_passes.def, in table order.
enum class ReductionPass : unsigned {
#define AOTFUZZ_REDUCTION(id, name, enumerator, description) id,
#include "reduce/reduction_passes.def"
#undef AOTFUZZ_REDUCTION
  kCount
};

/// Appends a pass's candidate steps for a module, in the order the reducer tries them.
using ReductionEnumerator = void (*)(const ir::Module&, std::vector<ReductionCandidate>&);

/// A row of the reduction step table.
struct ReductionPassInfo {
  ReductionPass pass;
  std::string_view name;
  ReductionEnumerator enumerate;
  std::string_view description;
};

/// Every reduction pass, in the order a round tries them.
const std::vector<ReductionPassInfo>& reduction_pass_table();
/// The pass whose CLI name is `name`.
std::optional<ReductionPass> parse_reduction_pass(std::string_view name);

/// The size figures a reduction reports (over every function of the module).
struct ModuleSize {
  std::size_t ops = 0;          ///< elementwise op calls (add, subtract, multiply)
  std::size_t inputs = 0;       ///< parameters of @main
  std::size_t annotations = 0;  ///< compiler_begin and compiler_end calls
  std::size_t nodes = 0;        ///< distinct non-variable nodes of @main
};
ModuleSize module_size(const ir::Module& module);

/// The well-founded measure every accepted step strictly decreases (lexicographically): nodes
/// plus edges of @main, parameters, distinct targets, non-float32 tensors among the parameters,
/// the sum of parameter ranks, the sum of parameter element counts. It guarantees termination.
using Complexity = std::array<std::uint64_t, 6>;
Complexity complexity(const ir::Module& module);

/// "Is this module still interesting?" Called from several threads at once; exceptions count
/// as false.
using Predicate = std::function<bool(const ir::Module&)>;

/// How to reduce.
struct ReduceOptions {
  /// Candidates evaluated in parallel (a batch); the first success in candidate order wins, so
  /// the result does not depend on this number.
  int jobs = 1;
  /// Give up (keeping the best module so far) after this long; 0 means no limit.
  std::chrono::milliseconds time_limit{0};
  /// Checked between batches: when set, stop and return the best module so far.
  const std::atomic<bool>* stop = nullptr;
  /// The passes to use, in table order; empty means all of them.
  std::vector<ReductionPass> passes;
  /// No candidate gives a parameter tensor of @main a rank below this: a system whose known
  /// limits the campaign draws inside (TVM's ccompiler takes rank 2) keeps a repro inside them too,
  /// so that it shows the same bug on every build it is triaged on.
  std::size_t min_rank = 0;
  /// Called after every accepted step with the pass and the new module.
  std::function<void(ReductionPass, const ir::Module&)> on_step;
};

/// What a reduction did.
struct ReduceResult {
  ir::Module module;           ///< the smallest interesting module found
  std::size_t steps = 0;       ///< accepted steps
  std::size_t evaluated = 0;   ///< predicate calls
  std::size_t cache_hits = 0;  ///< candidates answered from the verdict cache
  std::size_t rejected = 0;    ///< candidates that did not verify or did not shrink
  std::map<std::string, std::size_t> steps_per_pass;
  bool minimal = false;  ///< no single step of any pass applies (not cut short)
  std::chrono::milliseconds elapsed{0};
  ModuleSize before, after;
};

/// Reduces `module`, which must satisfy `keep` (if it does not, the result is `module` itself,
/// with minimal = false). Repeats rounds over the passes; within a pass, keeps taking the first
/// candidate (in candidate order) that verifies, strictly lowers complexity() and satisfies
/// `keep`, until none does; stops after a round with no step (1-minimal). Verdicts are cached
/// by structure (reduce/verdict_cache.h): a candidate structurally equal to one judged before is
/// not judged again.
ReduceResult reduce(const ir::Module& module, const Predicate& keep,
                    const ReduceOptions& options = {});

/// The predicate "run_case(m, options) has verdict signature `signature`".
Predicate same_signature(const oracle::CaseOptions& options, std::string signature);

}  // namespace aotfuzz::reduce

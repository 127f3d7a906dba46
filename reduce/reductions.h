// The reductions of reduction_passes.def, one per file (reduce/<enumerator>.cc), as llvm-reduce
// keeps one delta pass per file. Each appends its candidate steps for a module, in the order they
// are tried; the reducer (reducer.cc) builds, verifies and judges them.
#pragma once

#include <functional>
#include <vector>

#include "ir/module.h"

namespace aotfuzz::reduce {

/// One candidate step: builds the reduced module, or throws ir::Error when it does not apply.
using ReductionCandidate = std::function<ir::Module()>;

#define AOTFUZZ_REDUCTION(id, name, enumerator, description) \
  void enumerator(const ir::Module& m, std::vector<ReductionCandidate>& out);
#include "reduce/reduction_passes.def"
#undef AOTFUZZ_REDUCTION

}  // namespace aotfuzz::reduce

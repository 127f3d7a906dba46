// The reduction `convert-dtype`. One candidate step: make every parameter float32. Requires a
// verified module; each candidate is rebuilt from it and verified by the reducer, which drops one
// that throws or does not lower complexity().
#include "reduce/reductions.h"

#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void convert_dtype(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  bool any = false;
  for (const auto& p : main_of(m)->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) any |= t->dtype() != ir::DType::kFloat32;
  }
  if (!any) return;
  out.push_back([m] {
    return retype_params(
        m, [](const ir::Type& t) { return ir::TypeNode::tensor(t->shape(), ir::DType::kFloat32); });
  });
}

}  // namespace aotfuzz::reduce

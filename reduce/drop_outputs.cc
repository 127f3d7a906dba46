// The reduction `drop-outputs`. One candidate step: keep one field of @main's result tuple, or drop
// one field of it. Requires a verified module; each candidate is rebuilt from it and verified by
// the reducer, which drops one that throws or does not lower complexity().
#include "reduce/reductions.h"

#include <cstddef>
#include <utility>

#include "reduce/rewrite.h"

namespace aotfuzz::reduce {

void drop_outputs(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  auto tup = ir::as_ptr<ir::TupleNode>(main_of(m)->body());
  if (!tup) return;
  const auto fields = tup->fields();
  if (fields.size() == 1) {
    out.push_back([m, fields] { return with_body(m, fields[0]); });
    return;
  }
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out.push_back([m, fields, i] { return with_body(m, fields[i]); });
  }
  if (fields.size() < 3) return;
  for (std::size_t i = 0; i < fields.size(); ++i) {
    out.push_back([m, fields, i] {
      std::vector<ir::Expr> kept = fields;
      kept.erase(kept.begin() + static_cast<std::ptrdiff_t>(i));
      return with_body(m, ir::TupleNode::make(std::move(kept)));
    });
  }
}

}  // namespace aotfuzz::reduce

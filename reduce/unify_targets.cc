// The reduction `unify-targets`. One candidate step: rename one region target to the main one
// (ccompiler when present). Requires a verified module; each candidate is rebuilt from it and
// verified by the reducer, which drops one that throws or does not lower complexity().
#include "reduce/reductions.h"

#include <string>
#include <utility>

#include "ir/traversal.h"
#include "reduce/rewrite.h"

namespace aotfuzz::reduce {
void unify_targets(const ir::Module& m, std::vector<ReductionCandidate>& out) {
  const auto targets = targets_of(m);
  std::string canonical;
  if (targets.count("ccompiler")) {
    canonical = "ccompiler";
  } else {
    for (const auto& t : targets) {
      if (t != "default") {
        canonical = t;
        break;
      }
    }
  }
  if (canonical.empty()) return;
  std::vector<std::string> order;
  for (const auto& t : targets) {
    if (t != canonical && t != "default") order.push_back(t);
  }
  if (targets.count("default")) order.push_back("default");
  for (const auto& from : order) {
    out.push_back([m, from, canonical] {
      auto body = ir::rewrite(
          main_of(m)->body(), [&](const ir::Expr& old, std::vector<ir::Expr> kids) -> ir::Expr {
            auto t = ir::annotation_target(old.get());
            if (!t || *t != from) return ir::with_children(old, kids);
            const auto* call = ir::as<ir::CallNode>(old);
            return ir::CallNode::make(*call->op(), std::move(kids),
                                      call->attrs().with("compiler", canonical));
          });
      return with_body(m, body);
    });
  }
}

}  // namespace aotfuzz::reduce

// Property: RegionSet::merge (which splices lists and walks the shorter side) gives exactly the
// ins, outs and members that TVM's MergeRegions gives, written here the direct way (append, then
// drop every begin whose argument lies in the source region together with that end), over
// random merge sequences on the regions of generated graphs.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <unordered_map>

#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/error.h"
#include "ir/regions.h"
#include "ir/traversal.h"

namespace aotfuzz::ir {
namespace {

// The direct model of one region.
struct ModelRegion {
  std::vector<Expr> ins, outs;
  std::set<const ExprNode*> nodes;
};

void model_merge(std::map<int, ModelRegion>& regions, std::map<int, int>& root, int src, int dest) {
  while (root[src] != src) src = root[src];
  while (root[dest] != dest) dest = root[dest];
  if (src == dest) return;
  ModelRegion& s = regions.at(src);
  ModelRegion& d = regions.at(dest);
  d.ins.insert(d.ins.end(), s.ins.begin(), s.ins.end());
  d.outs.insert(d.outs.end(), s.outs.begin(), s.outs.end());
  std::set<const ExprNode*> internal_outs;
  std::vector<Expr> kept;
  for (const auto& in : d.ins) {
    const ExprNode* arg = as<CallNode>(in)->args()[0].get();
    if (s.nodes.count(arg)) {
      internal_outs.insert(arg);
    } else {
      kept.push_back(in);
    }
  }
  d.ins = kept;
  std::erase_if(d.outs, [&](const Expr& e) { return internal_outs.count(e.get()) > 0; });
  d.nodes.insert(s.nodes.begin(), s.nodes.end());
  root[src] = dest;
  regions.erase(src);
}

std::vector<const ExprNode*> ptrs(const std::list<Expr>& l) {
  std::vector<const ExprNode*> out;
  for (const auto& e : l) out.push_back(e.get());
  return out;
}
std::vector<const ExprNode*> ptrs(const std::vector<Expr>& l) {
  std::vector<const ExprNode*> out;
  for (const auto& e : l) out.push_back(e.get());
  return out;
}

TEST(RegionsProperty, MergeSequencesAgreeWithTheDirectFormOfTvmsMergeRegions) {
  const auto property = [](std::uint64_t seed, std::vector<std::pair<unsigned, unsigned>> picks) {
    generator::GenPolicy policy = generator::with_size(generator::GenPolicy{}, 24);
    policy.targets = {{"ccompiler", 2}, {"dsp", 1}};
    policy.p_new_region = 0.7;
    policy.p_host_op = 0.1;
    Rng rng(seed);
    const Module m = generator::generate(policy, rng);
    RegionSet set = RegionSet::build(m.main()->body());
    std::map<int, ModelRegion> model;
    std::map<int, int> root;
    for (const Region* r : set.regions()) {
      ModelRegion& mr = model[r->id];
      mr.ins.assign(r->ins.begin(), r->ins.end());
      mr.outs.assign(r->outs.begin(), r->outs.end());
      for (const auto& n : r->nodes) mr.nodes.insert(n.get());
    }
    for (int id = 0; id < set.next_id(); ++id) root[id] = id;
    for (const auto& [a, b] : picks) {
      const auto live = set.regions();
      if (live.size() < 2) break;
      const int src = live[a % live.size()]->id;
      const int dest = live[b % live.size()]->id;
      set.merge(src, dest);
      model_merge(model, root, src, dest);
      const auto now = set.regions();
      RC_ASSERT(now.size() == model.size());
      for (const Region* r : now) {
        const ModelRegion& mr = model.at(r->id);
        RC_ASSERT(ptrs(r->ins) == ptrs(mr.ins));
        RC_ASSERT(ptrs(r->outs) == ptrs(mr.outs));
        const auto members = ptrs(r->nodes);
        RC_ASSERT(std::set<const ExprNode*>(members.begin(), members.end()) == mr.nodes);
        RC_ASSERT(members.size() == mr.nodes.size());
        for (const auto* n : members) RC_ASSERT(set.region_of(n) == r);
      }
    }
  };
  rc::detail::TestParams params = rc::detail::configuration().testParams;
  params.maxSuccess = std::max(params.maxSuccess, 500);
  rc::detail::TestMetadata metadata;
  metadata.id = "RegionsProperty/MergeSequences";
  const auto result = rc::detail::checkTestable(property, metadata, params);
  if (!result.template is<rc::detail::SuccessResult>()) {
    std::ostringstream message;
    rc::detail::printResultMessage(result, message);
    FAIL() << message.str();
  }
}

// What RegionSet::build(body) throws, or "" when it accepts the body; check() when `light`.
std::string region_error(const Expr& body, bool light) {
  try {
    const std::vector<Expr> order = post_order(body);
    if (light) {
      RegionSet::check(body, order);
    } else {
      RegionSet::build(body, order);
    }
    return "";
  } catch (const VerifyError& e) {
    return e.what();
  }
}

RC_GTEST_PROP(RegionsProperty, CheckThrowsExactlyWhatBuildThrowsOnBrokenAnnotations,
              (std::uint64_t seed, std::vector<std::pair<unsigned, bool>> breaks)) {
  // Generated graphs are valid; dropping annotations (an annotation replaced by its argument) or
  // giving them another target breaks the region rules in every way build() reports.
  generator::GenPolicy policy = generator::with_size(generator::GenPolicy{}, 16);
  policy.targets = {{"ccompiler", 2}, {"dsp", 1}};
  Rng rng(seed);
  const Module m = generator::generate(policy, rng);
  Expr body = m.main()->body();
  for (const auto& [pick, retarget] : breaks) {
    std::vector<const CallNode*> annotations;
    for (const auto& n : post_order(body)) {
      const auto* call = as<CallNode>(n);
      if (call != nullptr && call->op() && is_annotation(*call->op())) annotations.push_back(call);
    }
    if (annotations.empty()) break;
    const CallNode* victim = annotations[pick % annotations.size()];
    std::unordered_map<const ExprNode*, Expr> replace;
    if (retarget) {
      const std::string other =
          *victim->attrs().find_string("compiler") == "dsp" ? "ccompiler" : "dsp";
      replace[victim] = victim->is_op(Op::kCompilerBegin) ? compiler_begin(victim->args()[0], other)
                                                          : compiler_end(victim->args()[0], other);
    } else {
      replace[victim] = victim->args()[0];
    }
    body = substitute(body, replace);
    const std::string full = region_error(body, false);
    RC_ASSERT(region_error(body, true) == full);
    if (!full.empty()) {
      // The kind of rejection (the message up to its first detail), to see that all are met.
      RC_TAG(full.substr(0, full.find_first_of("%(0123456789")));
      return;
    }
  }
  RC_TAG("still valid");
}

}  // namespace
}  // namespace aotfuzz::ir

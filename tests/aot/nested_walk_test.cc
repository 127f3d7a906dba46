// Unit tests of NestedWalk's visiting order, the order MergeCompilerRegions and PartitionGraph
// inherit from TVM's MixedModeVisitor: children first (callee, then arguments left to right),
// each node once across walks, a pending node's nested walks before its finish.
#include "aot/nested_walk.h"

#include <gtest/gtest.h>

#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include "ir/expr.h"
#include "ir/type.h"

namespace aotfuzz::aot {
namespace {

ir::Type f32() { return ir::TypeNode::tensor({2}, ir::DType::kFloat32); }

// Records every call the walker makes. Nodes listed in `subs` are left pending until each of
// their subgraphs has been asked for; a subgraph is made by a function when it is asked for, so
// the handler keeps no reference to it.
struct Recorder {
  std::map<const ir::ExprNode*, std::string> names;
  std::map<const ir::ExprNode*, std::vector<std::function<ir::Expr()>>> subs;
  std::vector<std::string> events;

  std::string name(const ir::Expr& e) const {
    auto it = names.find(e.get());
    return it != names.end() ? it->second : "?";
  }
  bool start(const ir::Expr& node) {
    events.push_back("start " + name(node));
    return subs.contains(node.get());
  }
  ir::Expr next(const ir::Expr& node) {
    events.push_back("next " + name(node));
    auto& pending = subs.at(node.get());
    if (pending.empty()) return nullptr;
    auto make = std::move(pending.front());
    pending.erase(pending.begin());
    return make();
  }
  void finish(const ir::Expr& node) { events.push_back("finish " + name(node)); }
  [[noreturn]] void on_cycle(const ir::Expr& node) {
    events.push_back("cycle " + name(node));
    throw std::runtime_error("cycle at " + name(node));
  }
};

struct Graph {
  ir::Var x = ir::VarNode::make("x", f32());
  ir::Var y = ir::VarNode::make("y", f32());
  ir::Var z = ir::VarNode::make("z", f32());
  ir::Expr a = ir::CallNode::make(ir::Op::kAdd, {x, y});
  ir::Expr b = ir::CallNode::make(ir::Op::kMultiply, {a, x});
  ir::Expr c = ir::CallNode::make(ir::Op::kSubtract, {b, a});
  ir::Expr d = ir::CallNode::make(ir::Op::kAdd, {z, a});  // not reachable from c

  void name_all(Recorder& r) const {
    r.names = {{x.get(), "x"}, {y.get(), "y"}, {z.get(), "z"}, {a.get(), "a"},
               {b.get(), "b"}, {c.get(), "c"}, {d.get(), "d"}};
  }
};

std::vector<std::string> names_of(const NestedWalk& walk, const Recorder& r) {
  std::vector<std::string> out;
  for (const auto& node : walk.order()) {
    auto it = r.names.find(node.get());
    out.push_back(it != r.names.end() ? it->second : "?");
  }
  return out;
}

TEST(NestedWalk, StartsChildrenFirstLeftToRightAndEachNodeOnce) {
  Graph g;
  Recorder r;
  g.name_all(r);
  NestedWalk walk;
  walk.walk(g.c, r);
  EXPECT_EQ(r.events,
            (std::vector<std::string>{"start x", "start y", "start a", "start b", "start c"}));
  EXPECT_EQ(names_of(walk, r), (std::vector<std::string>{"x", "y", "a", "b", "c"}));
  // A second walk over shared nodes starts only the new ones.
  r.events.clear();
  walk.walk(g.d, r);
  walk.walk(g.c, r);
  EXPECT_EQ(r.events, (std::vector<std::string>{"start z", "start d"}));
  EXPECT_TRUE(walk.visited(g.d.get()));
  EXPECT_FALSE(walk.visited(ir::CallNode::make(ir::Op::kAdd, {g.x, g.x}).get()));
}

TEST(NestedWalk, WalksAPendingNodesSubgraphsBeforeFinishingIt) {
  Graph g;
  Recorder r;
  g.name_all(r);
  // b waits for d (new: z, then d; a is done already) and then for a (done: nothing to walk).
  r.subs[g.b.get()] = {[&] { return g.d; }, [&] { return g.a; }};
  NestedWalk walk;
  walk.walk(g.c, r);
  EXPECT_EQ(r.events, (std::vector<std::string>{"start x", "start y", "start a", "start b",
                                                "next b", "start z", "start d", "next b", "next b",
                                                "finish b", "start c"}));
  EXPECT_EQ(names_of(walk, r), (std::vector<std::string>{"x", "y", "a", "z", "d", "b", "c"}));
}

TEST(NestedWalk, FinishesTheInnermostPendingNodeFirst) {
  Graph g;
  Recorder r;
  g.name_all(r);
  // b waits for d, and d itself waits for y (done) before it finishes.
  r.subs[g.b.get()] = {[&] { return g.d; }};
  r.subs[g.d.get()] = {[&] { return ir::Expr(g.y); }};
  NestedWalk walk;
  walk.walk(g.c, r);
  EXPECT_EQ(r.events, (std::vector<std::string>{"start x", "start y", "start a", "start b",
                                                "next b", "start z", "start d", "next d", "next d",
                                                "finish d", "next b", "finish b", "start c"}));
}

TEST(NestedWalk, ReportsAPendingNodeReachedAgainAsACycle) {
  Graph g;
  Recorder r;
  g.name_all(r);
  // b's subgraph uses b itself: where TVM's recursion never ended.
  r.subs[g.b.get()] = {[&] { return ir::Expr(ir::CallNode::make(ir::Op::kAdd, {g.b, g.z})); }};
  NestedWalk walk;
  EXPECT_THROW(walk.walk(g.c, r), std::runtime_error);
  ASSERT_FALSE(r.events.empty());
  EXPECT_EQ(r.events.back(), "cycle b");
}

TEST(NestedWalk, KeepsSubgraphsTheHandlerDroppedAliveWhileItRemembersThem) {
  Graph g;
  Recorder r;
  g.name_all(r);
  // The subgraph exists only inside the walker once next() returns it.
  r.subs[g.b.get()] = {[&] { return ir::Expr(ir::CallNode::make(ir::Op::kAdd, {g.z, g.z})); }};
  NestedWalk walk;
  walk.walk(g.c, r);
  ASSERT_EQ(walk.order().size(), 7u);  // x y a z (z+z) b c
  const ir::Expr& made = walk.order()[4];
  EXPECT_EQ(made->kind(), ir::ExprKind::kCall);
  EXPECT_TRUE(walk.visited(made.get()));
  // Nodes made afterwards never look visited, whatever addresses they get.
  for (int i = 0; i < 64; ++i) {
    const ir::Expr fresh = ir::CallNode::make(ir::Op::kAdd, {g.z, g.z});
    EXPECT_FALSE(walk.visited(fresh.get()));
  }
}

}  // namespace
}  // namespace aotfuzz::aot

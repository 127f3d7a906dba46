// Annotation helpers and the region cycle check.
#include "aot/annotations.h"

#include <algorithm>
#include <array>
#include <unordered_map>

#include "ir/node_map.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
bool is_begin(const ir::ExprNode* node) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(ir::Op::kCompilerBegin);
}

bool is_end(const ir::ExprNode* node) {
  const auto* call = ir::as<ir::CallNode>(node);
  return call != nullptr && call->is_op(ir::Op::kCompilerEnd);
}

const ir::Expr& strip_annotations(const ir::Expr& e) {
  const ir::Expr* cur = &e;
  while (is_begin(cur->get()) || is_end(cur->get())) {
    cur = &ir::as<ir::CallNode>(*cur)->args()[0];
  }
  return *cur;
}

std::string sanitize_name(std::string name) {
  // A table of [A-Za-z0-9] rather than std::isalnum: the same in the "C" locale, which nothing
  // changes, without a call and branches per character.
  static constexpr std::array<bool, 256> kAlnum = [] {
    std::array<bool, 256> t{};
    for (int c = 0; c < 256; ++c) {
      t[c] = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    }
    return t;
  }();
  for (char& c : name) c = kAlnum[static_cast<unsigned char>(c)] ? c : '_';
  return name;
}

bool is_user_function(const ir::FunctionNode& fn) {
  return !fn.attrs().has("Compiler") && !fn.attrs().has("Primitive");
}

std::optional<std::string> find_region_cycle(const std::vector<ir::Expr>& order,
                                             const ir::RegionSet& regions) {
  // Units of the contracted graph: region ids first, then one unit per node outside every region.
  const int num_region_units = regions.next_id();
  // Whether each region id is a host region (target `default`): once per region, not per node.
  std::vector<char> host(static_cast<std::size_t>(num_region_units), 0);
  for (const ir::Region* r : regions.regions()) host[r->id] = r->target == "default";
  ir::NodeMap<int> unit(order.size());
  std::vector<const ir::ExprNode*> outside;  // unit - num_region_units -> node
  for (const auto& element : order) {
    const ir::ExprNode* node = element.get();
    if (const ir::Region* r = regions.region_of(node); r != nullptr && !host[r->id]) {
      unit.try_emplace(node, r->id);
    } else {
      unit.try_emplace(node, num_region_units + static_cast<int>(outside.size()));
      outside.push_back(node);
    }
  }
  const int n = num_region_units + static_cast<int>(outside.size());
  // The contracted edges, both ways.
  std::vector<std::vector<int>> succ(n), pred(n);
  for (const auto& element : order) {
    const ir::ExprNode* node = element.get();
    const int to = *unit.find(node);
    for (std::size_t k = 0; k < ir::num_children(*node); ++k) {
      const int from = *unit.find(ir::child(*node, k).get());
      if (from != to) {
        succ[from].push_back(to);
        pred[to].push_back(from);
      }
    }
  }
  // Kahn from the sources (which removes every unit unless there is a cycle), then from the
  // sinks: what remains lies on a cycle or between cycles, and every remaining unit has a
  // remaining successor.
  std::vector<bool> alive(n, true);
  auto trim = [&](const std::vector<std::vector<int>>& in_edges,
                  const std::vector<std::vector<int>>& out_edges) {
    std::vector<int> degree(n, 0);
    std::vector<int> ready;  // a FIFO queue: ready[head..]
    for (int u = 0; u < n; ++u) {
      if (!alive[u]) continue;
      for (int v : in_edges[u]) degree[u] += alive[v] ? 1 : 0;
      if (degree[u] == 0) ready.push_back(u);
    }
    for (std::size_t head = 0; head < ready.size(); ++head) {
      const int u = ready[head];
      alive[u] = false;
      for (int v : out_edges[u]) {
        if (alive[v] && --degree[v] == 0) ready.push_back(v);
      }
    }
  };
  trim(pred, succ);
  trim(succ, pred);
  int start = -1;
  for (int u = 0; u < n && start < 0; ++u) {
    if (alive[u]) start = u;
  }
  if (start < 0) return std::nullopt;
  // Walk forward until a unit repeats: the loop between the repeats is a cycle.
  std::unordered_map<int, std::size_t> seen;
  std::vector<int> path;
  int cur = start;
  while (!seen.count(cur)) {
    seen.emplace(cur, path.size());
    path.push_back(cur);
    int next = -1;
    for (int v : succ[cur]) {
      if (alive[v]) {
        next = v;
        break;
      }
    }
    cur = next;
  }
  std::vector<int> cycle(path.begin() + static_cast<std::ptrdiff_t>(seen.at(cur)), path.end());
  // Report the lowest region id on the cycle and the first unit after it.
  std::size_t at = 0;
  for (std::size_t i = 0; i < cycle.size(); ++i) {
    if (cycle[i] < num_region_units && (cycle[at] >= num_region_units || cycle[i] < cycle[at])) {
      at = i;
    }
  }
  const int region_id = cycle[at];
  const ir::Region* region = nullptr;
  for (const ir::Region* r : regions.regions()) {
    if (r->id == region_id) region = r;
  }
  // A region contracted to itself needs at least one other unit on its cycle.
  std::string via;
  for (std::size_t k = 1; k < cycle.size() && via.empty(); ++k) {
    int u = cycle[(at + k) % cycle.size()];
    if (u >= num_region_units) {
      via = ir::describe(*outside[u - num_region_units]) + ", a node outside every region";
    }
  }
  if (via.empty()) {
    int u = cycle[(at + 1) % cycle.size()];
    for (const ir::Region* r : regions.regions()) {
      if (r->id == u) via = "region " + std::to_string(u) + " [" + r->target + "]";
    }
  }
  return "region " + std::to_string(region_id) + " [" + (region ? region->target : "?") +
         "] is cyclic: one of its outputs flows back into one of its inputs through " + via;
}

std::optional<std::string> find_region_cycle(const ir::Expr& body, const ir::RegionSet& regions) {
  return find_region_cycle(ir::post_order(body), regions);
}

}  // namespace aotfuzz::aot

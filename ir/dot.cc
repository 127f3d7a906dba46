// DOT export. Regions are computed per function body up front (so every target is known before
// colours are assigned); function clusters nest through an explicit task stack, not recursion.
#include "ir/dot.h"

#include <map>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/regions.h"
#include "ir/traversal.h"

namespace aotfuzz::ir {
namespace {

// Qualitative light colours (ColorBrewer Set3), legible behind black text.
constexpr const char* kPalette[] = {"#8dd3c7", "#ffffb3", "#bebada", "#fb8072",
                                    "#80b1d3", "#fdb462", "#b3de69", "#fccde5",
                                    "#d9d9d9", "#bc80bd", "#ccebc5", "#ffed6f"};

// A DOT double-quoted string body.
std::string quote(const std::string& s) {
  std::string out = "\"";
  for (char ch : s) {
    const auto c = static_cast<unsigned char>(ch);
    if (ch == '"' || ch == '\\') {
      out += '\\';
      out += ch;
    } else if (ch == '\n') {
      out += "\\n";
    } else if (c < 0x20 || c == 0x7f) {
      out += ' ';
    } else {
      out += ch;
    }
  }
  return out + "\"";
}

std::string attrs_text(const Attrs& attrs) {
  std::string out;
  for (const auto& [key, value] : attrs.entries()) {
    out += "\n" + key + "=";
    if (const auto* i = std::get_if<std::int64_t>(&value)) {
      out += std::to_string(*i);
    } else {
      out += std::get<std::string>(value);
    }
  }
  return out;
}

class DotWriter {
 public:
  explicit DotWriter(const Module& module) : module_(module) {}

  std::string run() {
    collect_regions();
    out_ += "digraph module {\n";
    out_ += "  graph [compound=true, rankdir=TB, fontname=\"monospace\"];\n";
    out_ +=
        "  node [shape=box, style=\"rounded,filled\", fillcolor=\"white\", "
        "fontname=\"monospace\"];\n";
    out_ += "  edge [fontname=\"monospace\", fontsize=10];\n";
    for (const auto& [name, fn] : module_.functions()) {
      ids_.clear();
      global_ids_.clear();
      write_function_tree(fn, "@" + name);
    }
    for (const auto& e : edges_) out_ += "  " + e + "\n";
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  struct Task {
    const FunctionNode* fn;
    std::string title;
    int indent;
    bool close;
    std::string fn_node;  // id of the local function's node in its parent, if any
  };

  // Builds the regions of every function body (global and local) and numbers the targets.
  void collect_regions() {
    std::set<std::string> targets;
    for (const auto& [name, fn] : module_.functions()) {
      std::vector<const FunctionNode*> fns{fn.get()};
      for (const auto& node : post_order(fn->body(), /*enter_functions=*/true)) {
        if (const auto* local = as<FunctionNode>(node)) fns.push_back(local);
      }
      for (const FunctionNode* f : fns) {
        if (auto t = f->attrs().get_string("Compiler")) targets.insert(*t);
        if (regions_.count(f)) continue;
        std::optional<RegionSet> set;
        try {
          set = RegionSet::build(f->body());
        } catch (const Error&) {
          // Invalid annotations: the body is drawn without region clusters.
        }
        if (set) {
          for (const Region* r : set->regions()) targets.insert(r->target);
        }
        regions_.emplace(f, std::move(set));
      }
    }
    std::size_t i = 0;
    for (const auto& t : targets) colour_[t] = kPalette[i++ % std::size(kPalette)];
  }

  std::string pad(int n) const { return std::string(static_cast<std::size_t>(n), ' '); }

  std::string label(const ExprNode& node) const {
    switch (node.kind()) {
      case ExprKind::kVar:
        return "%" + static_cast<const VarNode&>(node).name();
      case ExprKind::kGlobalVar:
        return "@" + static_cast<const GlobalVarNode&>(node).name();
      case ExprKind::kConstant:
        return "const\n" + type_to_string(node.type());
      case ExprKind::kCall: {
        const auto& call = static_cast<const CallNode&>(node);
        if (call.op()) {
          std::string out(op_name(*call.op()));
          if (auto t = call.attrs().get_string("compiler")) out += "\n" + *t;
          return out;
        }
        return "call";
      }
      case ExprKind::kTuple:
        return "tuple";
      case ExprKind::kTupleGetItem:
        return "." + std::to_string(static_cast<const TupleGetItemNode&>(node).index());
      case ExprKind::kFunction:
        return "fn";
    }
    return "?";
  }

  std::string shape(const ExprNode& node) const {
    switch (node.kind()) {
      case ExprKind::kVar:
        return ", shape=ellipse";
      case ExprKind::kConstant:
        return ", shape=box";
      case ExprKind::kGlobalVar:
        return ", shape=note";
      case ExprKind::kFunction:
        return ", shape=component";
      case ExprKind::kTuple:
      case ExprKind::kTupleGetItem:
        return ", shape=house";
      default:
        return "";
    }
  }

  // Declares `node` (once per top-level function) and returns its id. Globals are keyed by
  // name, so the picture does not depend on whether GlobalVar nodes are shared.
  std::string declare(const ExprNode& node, int indent, const std::string& extra = "") {
    auto it = ids_.find(&node);
    if (it != ids_.end()) return it->second;
    const auto* global = as<GlobalVarNode>(&node);
    if (global != nullptr) {
      auto git = global_ids_.find(global->name());
      if (git != global_ids_.end()) return git->second;
    }
    std::string id = "n";
    id += std::to_string(next_node_++);
    ids_.emplace(&node, id);
    if (global != nullptr) global_ids_.emplace(global->name(), id);
    out_ += pad(indent) + id + " [label=" + quote(label(node)) + shape(node) + extra + "];\n";
    return id;
  }

  std::string id_of(const ExprNode& node, int indent) { return declare(node, indent); }

  void open_cluster(int indent, const std::string& title, const std::string& style) {
    out_ += pad(indent) + "subgraph cluster_" + std::to_string(next_cluster_++) + " {\n";
    out_ += pad(indent + 2) + "label=" + quote(title) + ";\n";
    out_ += pad(indent + 2) + style + "\n";
  }

  void write_function_tree(const Function& root, const std::string& title) {
    std::vector<Task> tasks{{root.get(), title, 2, false, ""}};
    while (!tasks.empty()) {
      Task task = std::move(tasks.back());
      tasks.pop_back();
      if (task.close) {
        out_ += pad(task.indent) + "}\n";
        continue;
      }
      const FunctionNode& fn = *task.fn;
      const int in = task.indent + 2;
      auto target = fn.attrs().get_string("Compiler");
      open_cluster(task.indent, task.title + attrs_text(fn.attrs()),
                   target ? "style=\"filled,bold\"; fillcolor=" + quote(colour_.at(*target)) + ";"
                          : "style=solid; color=\"black\";");
      for (const auto& p : fn.params()) declare(*p, in);
      const auto order = post_order(fn.body());
      // Region clusters first: a node belongs to the first cluster that declares it.
      const auto& set = regions_.at(&fn);
      if (set) {
        std::unordered_set<const ExprNode*> members;
        for (const auto& n : order) members.insert(n.get());
        for (const Region* r : set->regions()) {
          open_cluster(in, "region " + std::to_string(r->id) + " [" + r->target + "]",
                       "style=\"filled,dashed\"; fillcolor=" + quote(colour_.at(r->target)) + ";");
          for (const auto& n : r->nodes) {
            if (members.count(n.get())) {
              declare(*n, in + 2, n == fn.body() ? ", peripheries=2" : "");
            }
          }
          out_ += pad(in) + "}\n";
        }
      }
      std::vector<const FunctionNode*> locals;
      std::vector<std::string> local_ids;
      for (const auto& n : order) {
        const std::string id = declare(*n, in, n == fn.body() ? ", peripheries=2" : "");
        if (const auto* local = as<FunctionNode>(n)) {
          locals.push_back(local);
          local_ids.push_back(id);
        }
        for (const auto& kid : children(*n)) {
          const bool callee = kid->type()->is_func();
          edges_.push_back(
              id_of(*kid, in) + " -> " + id +
              (callee ? " [style=dashed]" : " [label=" + quote(type_to_string(kid->type())) + "]") +
              ";");
        }
      }
      if (!task.fn_node.empty()) {
        edges_.push_back(id_of(*fn.body(), in) + " -> " + task.fn_node + " [style=dotted, label=" +
                         quote(type_to_string(fn.body()->type())) + "];");
      }
      tasks.push_back({nullptr, "", task.indent, true, ""});
      for (std::size_t i = locals.size(); i-- > 0;) {
        tasks.push_back({locals[i], "fn", in, false, local_ids[i]});
      }
    }
  }

  const Module& module_;
  std::string out_;
  std::vector<std::string> edges_;
  std::unordered_map<const FunctionNode*, std::optional<RegionSet>> regions_;
  std::map<std::string, std::string> colour_;
  std::unordered_map<const ExprNode*, std::string> ids_;
  std::unordered_map<std::string, std::string> global_ids_;
  int next_node_ = 0;
  int next_cluster_ = 0;
};

}  // namespace

std::string to_dot(const Module& module) { return DotWriter(module).run(); }

}  // namespace aotfuzz::ir

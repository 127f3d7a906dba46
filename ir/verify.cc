// The module invariants, checked in one place.
#include "ir/verify.h"

#include <algorithm>
#include <string_view>
#include <unordered_set>

#include "ir/error.h"
#include "ir/node_map.h"
#include "ir/printer.h"
#include "ir/regions.h"
#include "ir/show_text.h"
#include "ir/traversal.h"

namespace aotfuzz::ir {
namespace {

bool is_identifier(const std::string& s) {
  if (s.empty()) return false;
  auto alpha = [](char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; };
  if (!alpha(s[0])) return false;
  for (char c : s) {
    if (!alpha(c) && !(c >= '0' && c <= '9')) return false;
  }
  return true;
}

// Checks one function (and, through the work list, its local functions).
void verify_function(const Module& module, const std::string& name, const Function& root,
                     NodeSet& bound, std::vector<std::size_t>& callees) {
  std::vector<const FunctionNode*> work{root.get()};
  while (!work.empty()) {
    const FunctionNode* fn = work.back();
    work.pop_back();
    // Parameter lists are usually short, where a scan beats building sets of nodes and of
    // strings; long ones (hand-written modules) get the sets.
    const bool many_params = fn->params().size() > 16;
    NodeSet params(many_params ? fn->params().size() : 0);
    const auto is_param = [&](const VarNode* v) {
      if (many_params) return params.contains(v);
      return std::any_of(fn->params().begin(), fn->params().end(),
                         [v](const Var& p) { return p.get() == v; });
    };
    std::unordered_set<std::string_view> param_names;
    for (std::size_t i = 0; i < fn->params().size(); ++i) {
      const Var& p = fn->params()[i];
      if (!is_quotable_name(p->name())) {
        throw VerifyError("@" + name + ": parameter name \"" + show_text(p->name(), 64) +
                          "\" is not a name (printable ASCII other than '\"' and '\\', not "
                          "empty, not all digits)");
      }
      if (!bound.insert(p.get())) {
        throw VerifyError("@" + name + ": parameter %" + local_spelling(p->name()) +
                          " is bound twice");
      }
      bool repeated = many_params && !param_names.insert(p->name()).second;
      for (std::size_t j = 0; j < i && !many_params && !repeated; ++j) {
        repeated = fn->params()[j]->name() == p->name();
      }
      if (repeated)
        throw VerifyError("@" + name + ": two parameters are named %" + local_spelling(p->name()));
      if (many_params) params.insert(p.get());
    }
    const bool outlined = fn->attrs().has("Compiler") || fn->attrs().has("Primitive");
    const std::vector<Expr>& order = fn->body_order();
    bool annotated = false;
    for (const auto& node : order) {
      if (const auto* v = as<VarNode>(node)) {
        if (!is_param(v)) {
          throw VerifyError("@" + name + ": %" + local_spelling(v->name()) +
                            " is not a parameter of its enclosing function");
        }
      } else if (const auto* g = as<GlobalVarNode>(node)) {
        const std::size_t index = module.index_of(g->name());
        if (index == module.size()) {
          throw VerifyError("@" + name + " calls undefined @" + g->name());
        }
        const Function* callee = &module.functions()[index].second;
        if (!type_equal((*callee)->type(), g->type())) {
          throw VerifyError("@" + name + " calls @" + g->name() + " as " +
                            type_to_string(g->type()) + " but it has type " +
                            type_to_string((*callee)->type()));
        }
        callees.push_back(index);
      } else if (const auto* local = as<FunctionNode>(node)) {
        work.push_back(local);
      } else if (const auto* call = as<CallNode>(node);
                 call != nullptr && call->op() && is_annotation(*call->op())) {
        if (outlined) {
          throw VerifyError("@" + name + ": annotation " + describe(*node) +
                            " inside a Compiler/Primitive function");
        }
        annotated = true;
      }
    }
    // Without annotations there are no regions, so nothing for the region rules to reject
    // (partitioned and fused bodies, verified after every later pass).
    if (annotated) RegionSet::check(fn->body(), order);
  }
}

}  // namespace

void verify(const Module& module) {
  module.main();
  NodeSet bound;
  // Functions by their position in the module, so the call graph needs no string keys.
  std::vector<std::vector<std::size_t>> calls(module.size());
  for (std::size_t f = 0; f < module.size(); ++f) {
    const auto& [name, fn] = module.functions()[f];
    if (!is_identifier(name))
      throw VerifyError("function name '@" + name + "' is not an identifier");
    // The symbol is the function's C name in the generated code (TVM's global_symbol).
    if (const AttrValue* symbol = fn->attrs().find("global_symbol")) {
      const auto* text = std::get_if<std::string>(symbol);
      if (text == nullptr || !is_identifier(*text)) {
        throw VerifyError("@" + name + ": global_symbol must be a string that is an identifier");
      }
    }
    try {
      verify_function(module, name, fn, bound, calls[f]);
    } catch (const VerifyError&) {
      throw;
    } catch (const Error& e) {
      throw VerifyError("@" + name + ": " + e.what());
    }
  }
  // The call graph must be acyclic (three-colour DFS, iterative).
  std::vector<int> colour(module.size(), 0);
  for (std::size_t start = 0; start < module.size(); ++start) {
    if (colour[start] != 0) continue;
    std::vector<std::pair<std::size_t, std::size_t>> stack{{start, 0}};
    colour[start] = 1;
    while (!stack.empty()) {
      auto& [cur, next] = stack.back();
      const auto& out = calls[cur];
      if (next < out.size()) {
        const std::size_t callee = out[next++];
        const int c = colour[callee];
        if (c == 1) {
          throw VerifyError("recursive call cycle through @" + module.functions()[callee].first);
        }
        if (c == 0) {
          colour[callee] = 1;
          stack.emplace_back(callee, 0);
        }
        continue;
      }
      colour[cur] = 2;
      stack.pop_back();
    }
  }
}

}  // namespace aotfuzz::ir

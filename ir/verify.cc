// The module invariants, checked in one place.
#include "ir/verify.h"

#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/node_map.h"
#include "ir/regions.h"
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
                     NodeSet& bound,
                     std::vector<std::string>& callees) {
  std::vector<const FunctionNode*> work{root.get()};
  while (!work.empty()) {
    const FunctionNode* fn = work.back();
    work.pop_back();
    NodeSet params(fn->params().size());
    std::unordered_set<std::string> param_names;
    for (const auto& p : fn->params()) {
      if (!bound.insert(p.get())) {
        throw VerifyError("@" + name + ": parameter %" + p->name() + " is bound twice");
      }
      if (!is_identifier(p->name())) {
        throw VerifyError("@" + name + ": parameter name '" + p->name() + "' is not an identifier");
      }
      if (!param_names.insert(p->name()).second) {
        throw VerifyError("@" + name + ": two parameters are named %" + p->name());
      }
      params.insert(p.get());
    }
    const bool outlined = fn->attrs().has("Compiler") || fn->attrs().has("Primitive");
    for (const auto& node : post_order(fn->body())) {
      if (const auto* v = as<VarNode>(node)) {
        if (!params.contains(v)) {
          throw VerifyError("@" + name + ": %" + v->name() +
                            " is not a parameter of its enclosing function");
        }
      } else if (const auto* g = as<GlobalVarNode>(node)) {
        const Function* callee = module.find(g->name());
        if (callee == nullptr) throw VerifyError("@" + name + " calls undefined @" + g->name());
        if (!type_equal((*callee)->type(), g->type())) {
          throw VerifyError("@" + name + " calls @" + g->name() + " as " +
                            type_to_string(g->type()) + " but it has type " +
                            type_to_string((*callee)->type()));
        }
        callees.push_back(g->name());
      } else if (const auto* local = as<FunctionNode>(node)) {
        work.push_back(local);
      } else if (outlined && annotation_target(node.get())) {
        throw VerifyError("@" + name + ": annotation " + describe(*node) +
                          " inside a Compiler/Primitive function");
      }
    }
    if (!outlined) RegionSet::build(fn->body());
  }
}

}  // namespace

void verify(const Module& module) {
  module.main();
  NodeSet bound;
  std::unordered_map<std::string, std::vector<std::string>> calls;
  for (const auto& [name, fn] : module.functions()) {
    if (!is_identifier(name)) throw VerifyError("function name '@" + name + "' is not an identifier");
    // The symbol is the function's C name in the generated code (TVM's global_symbol).
    if (const AttrValue* symbol = fn->attrs().find("global_symbol")) {
      const auto* text = std::get_if<std::string>(symbol);
      if (text == nullptr || !is_identifier(*text)) {
        throw VerifyError("@" + name + ": global_symbol must be a string that is an identifier");
      }
    }
    try {
      verify_function(module, name, fn, bound, calls[name]);
    } catch (const VerifyError&) {
      throw;
    } catch (const Error& e) {
      throw VerifyError("@" + name + ": " + e.what());
    }
  }
  // The call graph must be acyclic (three-colour DFS, iterative).
  std::unordered_map<std::string, int> colour;
  for (const auto& [start, fn] : module.functions()) {
    if (colour[start] != 0) continue;
    std::vector<std::pair<std::string, std::size_t>> stack{{start, 0}};
    colour[start] = 1;
    while (!stack.empty()) {
      auto& [cur, next] = stack.back();
      const auto& out = calls[cur];
      if (next < out.size()) {
        const std::string& callee = out[next++];
        int c = colour[callee];
        if (c == 1) throw VerifyError("recursive call cycle through @" + callee);
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

// TVM v0.8's PartitionGraph (src/relay/transforms/partition_graph.cc): FlattenTupleOutputs,
// RemoveDefaultAnnotations, the Partitioner and NameMangleExtFuncs.
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "ir/node_map.h"
#include "ir/traversal.h"
#include "reference/annotated_region_set.h"
#include "reference/tvm_passes.h"
#include "reference/user_functions.h"

namespace aotfuzz::reference {
namespace {

// FlattenTupleOutputs: an end on a tuple becomes a tuple of one end per field. `order` is the
// post order of `body`.
ir::Expr flatten_tuple_outputs(const std::vector<ir::Expr>& order, const ir::Expr& body) {
  return ir::rewrite_in_order(order, body, [](const ir::Expr& old, std::vector<ir::Expr>& kids,
                                              bool changed) {
    if (is_compiler_end(old.get())) {
      if (const auto* tuple = ir::as<ir::TupleNode>(kids[0])) {
        std::vector<ir::Expr> fields;
        for (const ir::Expr& field : tuple->fields()) {
          fields.push_back(ir::compiler_end(field, compiler_of(old.get())));
        }
        return ir::Expr(ir::TupleNode::make(std::move(fields)));
      }
    }
    return ir::rebuilt(old, kids, changed);
  });
}

// RemoveDefaultAnnotations: annotations of the target "default" are dropped. `order` is the post
// order of `body`.
ir::Expr remove_default_annotations(const std::vector<ir::Expr>& order, const ir::Expr& body) {
  return ir::rewrite_in_order(order, body, [](const ir::Expr& old, std::vector<ir::Expr>& kids,
                                              bool changed) {
    if ((is_compiler_begin(old.get()) || is_compiler_end(old.get())) &&
        compiler_of(old.get()) == "default") {
      return kids[0];
    }
    return ir::rebuilt(old, kids, changed);
  });
}

// The post order of `rewritten`, which a rewrite made of `from`: `from_order` itself when the
// rewrite changed nothing, else a walk of its own kept in `storage`.
const std::vector<ir::Expr>& order_after(const ir::Expr& rewritten, const ir::Expr& from,
                                         const std::vector<ir::Expr>& from_order,
                                         std::vector<ir::Expr>& storage) {
  if (rewritten == from) return from_order;
  storage = ir::post_order(rewritten);
  return storage;
}

std::string sanitized(std::string name) {
  for (char& c : name) {
    const bool alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    if (!alnum) c = '_';
  }
  return name;
}

// RegionFuncMetadata.
struct RegionMeta {
  ir::Expr func_call;
  bool creating = false;  // CreateFunction is on the stack for this region
  std::vector<std::pair<ir::Var, ir::Expr>> args;
  std::unordered_map<const ir::ExprNode*, ir::Expr> func_out;  // by the end's argument
  std::unordered_map<const ir::ExprNode*, ir::Var> func_in;    // by the producer
};

// Partitioner: a MixedModeMutator over one function body whose Rewrite_ turns a begin into a
// parameter of its region's function and the first end of a region into the call of the
// region's function, built then from the region's outputs.
class Partitioner {
 public:
  Partitioner(const std::vector<ir::Expr>& order, std::string caller, std::string mangled_module,
              std::set<std::string>& names, std::vector<std::pair<std::string, ir::Function>>& out)
      : regions_(AnnotatedRegionSet::create(order)),
        caller_(std::move(caller)),
        mangled_module_(std::move(mangled_module)),
        names_(names),
        outlined_(out) {
    memo_.reserve(order.size());
  }

  // MixedModeMutator::VisitExpr: memoised, children first.
  ir::Expr visit(const ir::Expr& expr) {
    if (const ir::Expr* done = memo_.find(expr.get())) return *done;
    std::vector<ir::Expr> kids;
    kids.reserve(ir::num_children(*expr));
    for (std::size_t i = 0; i < ir::num_children(*expr); ++i) {
      kids.push_back(visit(ir::child(*expr, i)));
    }
    ir::Expr post = ir::with_children(expr, std::move(kids));
    ir::Expr result = rewrite(expr, post);
    memo_[expr.get()] = result;
    return result;
  }

 private:
  ir::Expr rewrite(const ir::Expr& call, const ir::Expr& post) {
    if (is_compiler_begin(call.get())) return rewrite_begin(call, post);
    if (is_compiler_end(call.get())) return rewrite_end(call);
    return post;
  }

  ir::Expr rewrite_begin(const ir::Expr& begin, const ir::Expr& post) {
    ir::Expr parent = ir::as<ir::CallNode>(begin)->args()[0];
    while (is_compiler_begin(parent.get()) || is_compiler_end(parent.get())) {
      parent = ir::as<ir::CallNode>(parent)->args()[0];
    }
    AnnotatedRegion* region = regions_.region_of(begin.get());
    // GetArgIdx: the begin's position among the region's inputs.
    int index = 0;
    bool found = false;
    for (const ir::Expr& input : region->ins) {
      if (input == begin) {
        found = true;
        break;
      }
      ++index;
    }
    if (!found) {
      throw TvmRefuses("TVM v0.8 fails ICHECK_NE(index, -1) in PartitionGraph: " +
                       ir::describe(*begin) + " is not an input of region " +
                       std::to_string(region->id));
    }
    RegionMeta& meta = meta_[region->id];
    if (auto it = meta.func_in.find(parent.get()); it != meta.func_in.end()) return it->second;
    ir::Var var = ir::VarNode::make(region->target + "_" + std::to_string(region->id) + "_i" +
                                        std::to_string(index),
                                    begin->type());
    meta.args.emplace_back(var, ir::as<ir::CallNode>(post)->args()[0]);
    meta.func_in[parent.get()] = var;
    return var;
  }

  ir::Expr rewrite_end(const ir::Expr& end) {
    AnnotatedRegion* region = regions_.region_of(end.get());
    RegionMeta& meta = meta_[region->id];
    if (!meta.func_call) {
      if (meta.creating) {
        // The memo is written after Rewrite_ returns, so this end is rewritten again and
        // CreateFunction re-entered with nothing changed: the recursion never ends.
        throw TvmRefuses("TVM v0.8 recurses forever in PartitionGraph: building the function of "
                         "region " +
                         std::to_string(region->id) + " reaches " + ir::describe(*end) +
                         ", an end of the same region, through the region's own outputs");
      }
      meta.creating = true;
      create_function(*region, end);
      meta.creating = false;
    }
    return meta_[region->id].func_out.at(ir::as<ir::CallNode>(end)->args()[0].get());
  }

  // CreateFunction: the region's distinct outputs in the order of its ends, each visited.
  void create_function(const AnnotatedRegion& region, const ir::Expr& end) {
    std::vector<ir::Expr> fields;
    std::vector<const ir::ExprNode*> rets;
    const std::list<ir::Expr> outs = region.outs;
    for (const ir::Expr& region_end : outs) {
      const ir::Expr& ret = ir::as<ir::CallNode>(region_end)->args()[0];
      if (std::find(rets.begin(), rets.end(), ret.get()) != rets.end()) continue;
      fields.push_back(visit(ret));
      rets.push_back(ret.get());
    }
    ir::Expr call = create_region_call(region, fields, end);
    RegionMeta& meta = meta_[region.id];
    if (rets.size() == 1) {
      meta.func_out[rets[0]] = call;
    } else {
      for (std::size_t i = 0; i < rets.size(); ++i) {
        meta.func_out[rets[i]] = ir::TupleGetItemNode::make(call, static_cast<int>(i));
      }
    }
  }

  // IsConstant: a Constant, or a Tuple whose fields are all Constants (PR #5476).
  static bool is_constant(const ir::Expr& e) {
    if (e->kind() == ir::ExprKind::kConstant) return true;
    const auto* tuple = ir::as<ir::TupleNode>(e);
    if (tuple == nullptr) return false;
    return std::all_of(tuple->fields().begin(), tuple->fields().end(), [](const ir::Expr& f) {
      return f->kind() == ir::ExprKind::kConstant;
    });
  }

  // CreateRegionCall, with NameMangleExtFuncs's name: `<mangled module>_<target>_<caller>_<id>`.
  // Constant arguments are bound into the function (relay::Bind drops their parameters).
  ir::Expr create_region_call(const AnnotatedRegion& region, const std::vector<ir::Expr>& fields,
                              const ir::Expr& end) {
    RegionMeta& meta = meta_[region.id];
    std::vector<ir::Var> params;
    std::vector<ir::Expr> args;
    std::unordered_map<const ir::ExprNode*, ir::Expr> bound;
    for (const auto& [var, arg] : meta.args) {
      if (is_constant(arg)) {
        bound.emplace(var.get(), arg);
        continue;
      }
      params.push_back(var);
      args.push_back(arg);
    }
    const std::string target = compiler_of(end.get());
    const std::string name = target + "_" + caller_ + "_" + std::to_string(region.id);
    if (names_.contains(name)) {
      throw TvmRefuses("TVM v0.8 fails ICHECK: Global function " + name + " already exists");
    }
    const std::string mangled = sanitized(mangled_module_ + "_" + name);
    if (!names_.insert(mangled).second) {
      throw TvmRefuses("TVM v0.8 cannot add @" + mangled +
                       " to the module: a global function of that name exists");
    }
    names_.insert(name);
    ir::Expr result = fields.size() == 1 ? fields[0] : ir::TupleNode::make(fields);
    if (!bound.empty()) result = ir::substitute(result, bound);
    // The attribute order TVM prints (the #9036 report).
    ir::Function fn = ir::FunctionNode::make(params, result,
                                             ir::Attrs{{"Inline", std::int64_t{1}},
                                                       {"Compiler", target},
                                                       {"global_symbol", mangled},
                                                       {"Primitive", std::int64_t{1}}});
    meta.func_call = ir::CallNode::make(ir::GlobalVarNode::make(mangled, fn->type()), args);
    outlined_.emplace_back(mangled, fn);
    return meta.func_call;
  }

  AnnotatedRegionSet regions_;
  std::string caller_;
  std::string mangled_module_;
  std::set<std::string>& names_;
  std::vector<std::pair<std::string, ir::Function>>& outlined_;
  std::map<int, RegionMeta> meta_;
  ir::NodeMap<ir::Expr> memo_;
};

}  // namespace

ir::Module partition_graph(const ir::Module& module, const std::string& mod_name) {
  // python/tvm/relay/backend/utils.py, mangle_module_name.
  const std::string mangled_module = mod_name.empty() ? "tvmgen" : "tvmgen_" + mod_name;
  std::set<std::string> names;
  for (const auto& [name, fn] : module.functions()) names.insert(name);
  std::vector<std::pair<std::string, ir::Function>> outlined;
  ir::Module out = map_user_functions(module, [&](const std::string& caller,
                                                 const ir::Function& fn) {
    std::vector<ir::Expr> flat_walk, body_walk;
    const ir::Expr flat = flatten_tuple_outputs(fn->body_order(), fn->body());
    const auto& flat_order = order_after(flat, fn->body(), fn->body_order(), flat_walk);
    const ir::Expr body = remove_default_annotations(flat_order, flat);
    const auto& order = order_after(body, flat, flat_order, body_walk);
    ir::Expr result;
    with_stack_for(order.size(), [&] {
      result = Partitioner(order, caller, mangled_module, names, outlined).visit(body);
    });
    return result;
  });
  for (auto& [name, fn] : outlined) out.add(name, fn);
  return out;
}

}  // namespace aotfuzz::reference

// PartitionGraph: TVM v0.8's Partitioner in TVM's visiting order, iterative.
#include "aot/partition_graph.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "aot/annotations.h"
#include "aot/nested_walk.h"
#include "aot/pass_guard.h"
#include "ir/node_map.h"
#include "ir/regions.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
namespace {

constexpr const char* kPassName = "partition";

struct Outlined {
  std::string name;
  ir::Function function;
};

// What TVM keeps per region: the call, the (parameter, argument) pairs, the parameter of each
// producer and the expression each output's consumers read.
struct RegionMeta {
  ir::Expr call;
  bool creating = false;
  std::vector<std::pair<ir::Var, ir::Expr>> args;
  std::unordered_map<const ir::ExprNode*, ir::Var> param_of_producer;
  std::unordered_map<std::string, ir::Var> param_of_type;  // Bug::kWrongParamDedup only
  std::unordered_map<const ir::ExprNode*, ir::Expr> out;
};

class Partitioner {
 public:
  Partitioner(const ir::Expr& body, std::string caller, const PipelineOptions& options,
              std::set<std::string>& taken_names)
      : body_(body),
        regions_(ir::RegionSet::build(body)),
        caller_(std::move(caller)),
        options_(options),
        taken_names_(taken_names) {
    for (const ir::Region* r : regions_.regions()) {
      int i = 0;
      for (const auto& in : r->ins) input_index_.try_emplace(in.get(), i++);
    }
  }

  ir::Expr run() {
    // A begin that is not among its region's inputs takes an output of its own region: TVM's
    // Partitioner ICHECK-fails on it (GetArgIdx == -1), and outlining would revisit the region.
    for (const ir::Region* r : regions_.regions()) {
      for (const auto& node : r->nodes) {
        if (is_begin(node.get()) && !input_index_.contains(node.get())) {
          throw PassError(kPassName, PassError::Kind::kRejectedInput,
                          "@" + caller_ + ": " + ir::describe(*node) +
                              " is not an input of region " + std::to_string(r->id) +
                              ": it takes an output of its own region (merge the regions first; "
                              "TVM v0.8 ICHECK-failed here)");
        }
      }
    }
    // A cyclic region (or two regions feeding each other) shows up as the walk reaching an end
    // of a region whose function is being built: where TVM recursed forever.
    NestedWalk walk([this](const ir::Expr& node) { return start(node); },
                    [this](const ir::Expr&) { reject_cycle(); });
    walk.walk(body_);
    return post(body_.get());
  }

  // Outlined functions by region id.
  std::map<int, Outlined>& outlined() { return outlined_; }

 private:
  class CreateTask : public NestedWalk::Task {
   public:
    CreateTask(Partitioner& p, ir::Expr end, const ir::Region* region)
        : p_(p), end_(std::move(end)), region_(region) {
      std::unordered_map<const ir::ExprNode*, int> seen;
      for (const auto& out : region->outs) {
        const ir::Expr& ret = ir::as<ir::CallNode>(out)->args()[0];
        if (seen.emplace(ret.get(), static_cast<int>(rets_.size())).second) rets_.push_back(ret);
      }
    }
    // TVM visits each distinct output in the order the ends were met before building the function.
    ir::Expr next() override { return next_ < rets_.size() ? rets_[next_++] : nullptr; }
    void finish() override {
      p_.create_function(*region_, rets_);
      p_.finish_end(end_);
    }

   private:
    Partitioner& p_;
    ir::Expr end_;
    const ir::Region* region_;
    std::vector<ir::Expr> rets_;
    std::size_t next_ = 0;
  };

  std::unique_ptr<NestedWalk::Task> start(const ir::Expr& node) {
    if (is_begin(node.get())) {
      visit_begin(node);
      return nullptr;
    }
    if (is_end(node.get())) {
      const ir::Region* region = regions_.region_of(node.get());
      RegionMeta& meta = meta_[region->id];
      if (meta.call) {
        finish_end(node);
        return nullptr;
      }
      if (meta.creating) reject_cycle();
      meta.creating = true;
      return std::make_unique<CreateTask>(*this, node, region);
    }
    std::vector<ir::Expr> kids(ir::num_children(*node));
    for (std::size_t k = 0; k < kids.size(); ++k) kids[k] = post(ir::child(*node, k).get());
    post_[node.get()] = ir::with_children(node, std::move(kids));
    return nullptr;
  }

  // The rewritten form of a node the walk has finished (children are finished first).
  const ir::Expr& post(const ir::ExprNode* node) {
    const ir::Expr* e = post_.find(node);
    if (e == nullptr) {
      throw PassError(kPassName, PassError::Kind::kBrokenOutput,
                      "internal: " + ir::describe(*node) + " was used before it was rewritten");
    }
    return *e;
  }

  [[noreturn]] void reject_cycle() {
    const auto cycle = find_region_cycle(body_, regions_);
    throw PassError(kPassName, PassError::Kind::kRejectedInput,
                    "@" + caller_ + ": " + (cycle ? *cycle : std::string("a region feeds itself")) +
                        " (TVM v0.8 recursed forever here)");
  }

  void visit_begin(const ir::Expr& begin) {
    const ir::Region* region = regions_.region_of(begin.get());
    const auto* call = ir::as<ir::CallNode>(begin);
    const int* index = input_index_.find(begin.get());
    RegionMeta& meta = meta_[region->id];
    const ir::Expr& producer = strip_annotations(call->args()[0]);
    const std::string type_key = ir::type_to_string(begin->type());
    const bool by_type = options_.bugs.on(Bug::kWrongParamDedup);
    if (by_type) {
      // Injected bug: parameters are de-duplicated by type, not by producer.
      if (auto it = meta.param_of_type.find(type_key); it != meta.param_of_type.end()) {
        post_[begin.get()] = it->second;
        return;
      }
    } else if (auto it = meta.param_of_producer.find(producer.get());
               it != meta.param_of_producer.end()) {
      post_[begin.get()] = it->second;
      return;
    }
    ir::Var var =
        ir::VarNode::make(outlined_param_name(region->target, region->id, *index), begin->type());
    meta.args.emplace_back(var, post(call->args()[0].get()));
    meta.param_of_producer.emplace(producer.get(), var);
    meta.param_of_type.emplace(type_key, var);
    post_[begin.get()] = var;
  }

  void finish_end(const ir::Expr& end) {
    const ir::Region* region = regions_.region_of(end.get());
    const ir::Expr& ret = ir::as<ir::CallNode>(end)->args()[0];
    post_[end.get()] = meta_.at(region->id).out.at(ret.get());
  }

  // TVM's CreateFunction / CreateRegionCall.
  void create_function(const ir::Region& region, const std::vector<ir::Expr>& rets) {
    RegionMeta& meta = meta_.at(region.id);
    std::vector<ir::Expr> fields;
    std::vector<int> index_of_ret;
    for (std::size_t i = 0; i < rets.size(); ++i) {
      fields.push_back(post(rets[i].get()));
      index_of_ret.push_back(static_cast<int>(i));
    }
    if (fields.size() >= 2 && options_.bugs.on(Bug::kSwappedOutputOrder)) {
      // Injected bug: the returned tuple disagrees with the indices the consumers read.
      std::swap(fields[0], fields[1]);
    }
    if (fields.size() >= 2 && options_.bugs.on(Bug::kRegionOutputOffByOne)) {
      // Injected bug: the last output is dropped; its consumers read the one before it.
      fields.pop_back();
      index_of_ret.back() = static_cast<int>(fields.size()) - 1;
    }
    std::vector<ir::Var> params;
    std::vector<ir::Expr> call_args;
    for (const auto& [var, arg] : meta.args) {
      params.push_back(var);
      call_args.push_back(arg);
    }
    const std::string name = outlined_name(options_.mod_name, region.target, caller_, region.id);
    if (!taken_names_.insert(name).second) {
      throw PassError(kPassName, PassError::Kind::kRejectedInput,
                      "global function @" + name + " already exists (outlining region " +
                          std::to_string(region.id) + " of @" + caller_ + ")");
    }
    ir::Expr result = fields.size() == 1 ? fields[0] : ir::TupleNode::make(fields);
    ir::Attrs attrs{{"Inline", std::int64_t{1}},
                    {"Compiler", region.target},
                    {"global_symbol", name},
                    {"Primitive", std::int64_t{1}}};
    ir::Function fn = ir::FunctionNode::make(params, result, attrs);
    meta.call = ir::CallNode::make(ir::GlobalVarNode::make(name, fn->type()), call_args);
    // One TupleGetItem per output index, shared by every consumer of that output.
    std::unordered_map<int, ir::Expr> read_of_index;
    for (std::size_t i = 0; i < rets.size(); ++i) {
      const int k = index_of_ret[i];
      ir::Expr& read = read_of_index[k];
      if (!read) read = fields.size() == 1 ? meta.call : ir::TupleGetItemNode::make(meta.call, k);
      meta.out[rets[i].get()] = read;
    }
    outlined_.emplace(region.id, Outlined{name, fn});
  }

  ir::Expr body_;
  ir::RegionSet regions_;
  std::string caller_;
  const PipelineOptions& options_;
  std::set<std::string>& taken_names_;
  ir::NodeMap<int> input_index_;
  ir::NodeMap<ir::Expr> post_{64};
  std::unordered_map<int, RegionMeta> meta_;
  std::map<int, Outlined> outlined_;
};

// FlattenTupleOutputs then RemoveDefaultAnnotations in one rewrite. A default end on a tuple
// still yields a new tuple node, as TVM's two passes do (sharing matters to FuseOps).
ir::Expr flatten_and_strip_defaults(const ir::Expr& body) {
  return ir::rewrite(body, [](const ir::Expr& old, std::vector<ir::Expr> kids) {
    const auto target = ir::annotation_target(old.get());
    if (!target) return ir::with_children(old, std::move(kids));
    const bool strip = *target == "default";
    if (is_end(old.get())) {
      if (const auto* tuple = ir::as<ir::TupleNode>(kids[0])) {
        std::vector<ir::Expr> fields;
        for (const auto& f : tuple->fields()) {
          fields.push_back(strip ? f : ir::compiler_end(f, *target));
        }
        return ir::Expr(ir::TupleNode::make(std::move(fields)));
      }
    }
    return strip ? kids[0] : ir::with_children(old, std::move(kids));
  });
}

}  // namespace

std::string outlined_name(std::string_view mod_name, std::string_view target,
                          std::string_view caller, int region_id) {
  return sanitize_name("tvmgen_" + std::string(mod_name) + "_" + std::string(target) + "_" +
                       std::string(caller) + "_" + std::to_string(region_id));
}

std::string outlined_param_name(std::string_view target, int region_id, int index) {
  std::string name = sanitize_name(std::string(target) + "_" + std::to_string(region_id) + "_i" +
                                   std::to_string(index));
  if (name.empty() || (name[0] >= '0' && name[0] <= '9')) name = "_" + name;
  return name;
}

ir::Expr flatten_tuple_outputs(const ir::Expr& body) {
  return ir::rewrite(body, [](const ir::Expr& old, std::vector<ir::Expr> kids) {
    if (is_end(old.get())) {
      if (const auto* tuple = ir::as<ir::TupleNode>(kids[0])) {
        const std::string target = *ir::annotation_target(old.get());
        std::vector<ir::Expr> fields;
        for (const auto& f : tuple->fields()) fields.push_back(ir::compiler_end(f, target));
        return ir::Expr(ir::TupleNode::make(std::move(fields)));
      }
    }
    return ir::with_children(old, std::move(kids));
  });
}

ir::Expr remove_default_annotations(const ir::Expr& body) {
  return ir::rewrite(body, [](const ir::Expr& old, std::vector<ir::Expr> kids) {
    if (ir::annotation_target(old.get()) == "default") return kids[0];
    return ir::with_children(old, std::move(kids));
  });
}

ir::Module partition_graph(const ir::Module& module, const PipelineOptions& options) {
  return guarded_pass(kPassName, module, options.verify_input, [&](const ir::Module& in) {
    std::set<std::string> taken;
    for (const auto& [name, fn] : in.functions()) taken.insert(name);
    ir::Module out;
    std::vector<Outlined> outlined;
    for (const auto& [name, fn] : in.functions()) {
      if (!is_user_function(*fn)) {
        out.add(name, fn);
        continue;
      }
      ir::Expr body = flatten_and_strip_defaults(fn->body());
      Partitioner partitioner(body, name, options, taken);
      body = partitioner.run();
      out.add(name, body == fn->body()
                        ? fn
                        : ir::FunctionNode::make(fn->params(), body, fn->attrs(), nullptr));
      for (auto& [id, o] : partitioner.outlined()) outlined.push_back(std::move(o));
    }
    for (auto& o : outlined) out.add(o.name, std::move(o.function));
    return out;
  });
}

}  // namespace aotfuzz::aot

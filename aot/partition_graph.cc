// PartitionGraph: TVM v0.8's Partitioner in TVM's visiting order, iterative.
//
// Requires: a module that passes ir::verify() (checked only with verify_input). Ensures: every
// region of every user function is outlined as TVM names and orders it, or PassError says why
// not; the output passes ir::verify() (guarded_pass checks it); the input is left unchanged.
#include "aot/partition_graph.h"

#include <algorithm>
#include <charconv>
#include <set>
#include <span>
#include <unordered_map>

#include "aot/annotations.h"
#include "aot/nested_walk.h"
#include "aot/pass_guard.h"
#include "ir/node_map.h"
#include "ir/printer.h"
#include "ir/regions.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
namespace {

constexpr const char* kPassName = "partition";

// `<target>_<region_id>_i`, the target as given (TVM builds the names from the Compiler
// attribute unsanitized; only function names are sanitized, and C never sees parameter names).
// A target the text form cannot quote (a '"', a '\\' or a control character) is spelled as the
// printer spells such a name. The index adds only digits, so a region computes this once.
std::string param_name_prefix(std::string_view target, int region_id) {
  char id[16];
  const std::string_view digits(id, std::to_chars(id, id + sizeof id, region_id).ptr - id);
  std::string prefix;
  prefix.reserve(target.size() + 4 + digits.size());
  prefix.append(target).append("_").append(digits).append("_i");
  if (!ir::is_quotable_name(prefix)) prefix = ir::local_spelling(prefix);
  return prefix;
}

struct Outlined {
  std::string name;
  ir::Function function;
};

// What TVM keeps per region: the call and the (parameter, argument) pairs, and the parameter of
// each producer.
struct RegionMeta {
  ir::Expr call;
  bool creating = false;
  std::vector<std::pair<ir::Var, ir::Expr>> args;
  // The parameter by producer, or by type under the bug.
  ir::NodeMap<ir::Var> param_of_producer;
  std::unordered_map<std::string, ir::Var> param_of_type;  // Bug::kWrongParamDedup only
  std::string param_prefix;  // param_name_prefix(), once the region has a parameter
};

// The handler of TVM's visiting order (NestedWalk): an end of a region not yet outlined is
// pending while the region's distinct outputs are walked, then the region's function is built.
class Partitioner {
 public:
  // `order` is ir::post_order(body).
  Partitioner(const ir::Expr& body, const std::vector<ir::Expr>& order, std::string caller,
              const Options& options, std::set<std::string>& taken_names)
      : body_(body),
        regions_(ir::RegionSet::build(body, order)),
        live_regions_(regions_.regions()),
        caller_(std::move(caller)),
        options_(options),
        taken_names_(taken_names),
        post_(order.size()),
        meta_(static_cast<std::size_t>(regions_.next_id())),
        outlined_(static_cast<std::size_t>(regions_.next_id())),
        walk_(order.size()) {
    std::size_t num_ins = 0;
    std::size_t num_outs = 0;
    for (const ir::Region* r : live_regions_) {
      num_ins += r->ins.size();
      num_outs += r->outs.size();
    }
    input_index_.reserve(num_ins);
    out_.reserve(num_outs);
    ret_seen_ = ir::NodeSet(num_outs);
    rets_.reserve(num_outs);
    for (const ir::Region* r : live_regions_) {
      int i = 0;
      for (const auto& in : r->ins) input_index_.try_emplace(in.get(), i++);
    }
  }

  ir::Expr run() {
    // A begin that is not among its region's inputs takes an output of its own region. TVM's
    // Partitioner (a post-order rewrite) reaches that inner end first and starts CreateFunction
    // for the region, which rewrites the region's outputs, reaches the same end again before it
    // is memoised and re-enters CreateFunction: it recurses until the stack overflows (the
    // ICHECK on GetArgIdx behind it is never reached).
    for (const ir::Region* r : live_regions_) {
      for (const auto& node : r->nodes) {
        if (is_begin(node.get()) && !input_index_.contains(node.get())) {
          throw PassError(kPassName, PassError::Kind::kRejectedInput,
                          "@" + caller_ + ": " + ir::describe(*node) +
                              " is not an input of region " + std::to_string(r->id) +
                              ": it takes an output of its own region (TVM v0.8 re-enters "
                              "CreateFunction for the region here and recurses until its stack "
                              "overflows)");
        }
      }
    }
    // A cyclic region (or two regions feeding each other) shows up as the walk reaching an end
    // of a region whose function is being built: where TVM recursed forever.
    walk_.walk(body_, *this);
    return post(body_);
  }

  // Outlined functions by region id (an empty entry for ids without one).
  std::vector<Outlined>& outlined() { return outlined_; }

  // NestedWalk's handler.
  bool start(const ir::Expr& node) {
    if (is_begin(node.get())) {
      visit_begin(node);
      return false;
    }
    if (is_end(node.get())) {
      const ir::Region* region = regions_.region_of(node.get());
      RegionMeta& meta = meta_[region->id];
      if (meta.call) {
        finish_end(node);
        return false;
      }
      if (meta.creating) reject_cycle();
      meta.creating = true;
      // TVM visits each distinct output in the order the ends were met before building the
      // function. A node is in one region, so one set serves every region.
      tasks_.push_back(Task{region, rets_.size(), rets_.size()});
      for (const auto& out : region->outs) {
        const ir::Expr& ret = ir::as<ir::CallNode>(out)->args()[0];
        if (ret_seen_.insert(ret.get())) rets_.push_back(ret);
      }
      return true;
    }
    const std::size_t n = ir::num_children(*node);
    kids_.clear();
    kids_.reserve(n);
    bool changed = false;
    for (std::size_t k = 0; k < n; ++k) {
      kids_.push_back(post(ir::child(*node, k)));
      changed |= kids_.back() != ir::child(*node, k);
    }
    post_[node.get()] = ir::rebuilt(node, kids_, changed);
    return false;
  }
  ir::Expr next(const ir::Expr&) {
    Task& task = tasks_.back();
    return task.next < rets_.size() ? rets_[task.next++] : nullptr;
  }
  void finish(const ir::Expr& end) {
    const Task task = tasks_.back();
    tasks_.pop_back();
    create_function(*task.region, std::span<const ir::Expr>(rets_).subspan(task.first));
    rets_.resize(task.first);
    finish_end(end);
  }
  [[noreturn]] void on_cycle(const ir::Expr&) { reject_cycle(); }

 private:
  // A pending region: its distinct outputs are rets_[first..], the next to walk rets_[next].
  struct Task {
    const ir::Region* region;
    std::size_t first;
    std::size_t next;
  };

  // The rewritten form of a node the walk has finished (children are finished first).
  ir::Expr post(const ir::Expr& node) const {
    const ir::Expr* e = post_.find(node.get());
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
    // Injected bug kWrongParamDedup: parameters are de-duplicated by type, not by producer.
    const bool by_type = options_.bugs.on(Bug::kWrongParamDedup);
    std::string type_key;
    if (by_type) {
      type_key = ir::type_to_string(begin->type());
      if (auto it = meta.param_of_type.find(type_key); it != meta.param_of_type.end()) {
        post_[begin.get()] = it->second;
        return;
      }
    } else if (const ir::Var* var = meta.param_of_producer.find(producer.get())) {
      post_[begin.get()] = *var;
      return;
    }
    if (meta.args.empty()) {
      meta.args.reserve(region->ins.size());
      meta.param_prefix = param_name_prefix(region->target, region->id);
    }
    // `<target>_<region id>_i<index>`, from the region's prefix.
    char digits[16];
    const auto num_digits = static_cast<std::size_t>(
        std::to_chars(digits, digits + sizeof digits, *index).ptr - digits);
    std::string name;
    name.reserve(meta.param_prefix.size() + num_digits);
    name.append(meta.param_prefix).append(digits, num_digits);
    ir::Var var = ir::VarNode::make(std::move(name), begin->type());
    meta.args.emplace_back(var, post(call->args()[0]));
    if (by_type) {
      meta.param_of_type.emplace(std::move(type_key), var);
    } else {
      meta.param_of_producer.try_emplace(producer.get(), var);
    }
    post_[begin.get()] = std::move(var);
  }

  // TVM's IsConstant: a Constant, or (since PR #5476) a Tuple of nothing but Constants.
  bool bound_as_constant(const ir::Expr& arg) const {
    // Injected bug kUnboundConstants: every input stays a parameter.
    if (options_.bugs.on(Bug::kUnboundConstants)) return false;
    if (arg->kind() == ir::ExprKind::kConstant) return true;
    const auto* tuple = ir::as<ir::TupleNode>(arg);
    // Injected bug kUnboundConstantTuples: the binding before PR #5476, lone constants only.
    if (tuple == nullptr || options_.bugs.on(Bug::kUnboundConstantTuples)) return false;
    return std::all_of(tuple->fields().begin(), tuple->fields().end(),
                       [](const ir::Expr& f) { return f->kind() == ir::ExprKind::kConstant; });
  }

  void finish_end(const ir::Expr& end) {
    const ir::Expr& ret = ir::as<ir::CallNode>(end)->args()[0];
    post_[end.get()] = *out_.find(ret.get());
  }

  // TVM's CreateFunction / CreateRegionCall.
  void create_function(const ir::Region& region, std::span<const ir::Expr> rets) {
    RegionMeta& meta = meta_[region.id];
    std::vector<ir::Expr> fields;
    fields.reserve(rets.size());
    for (const auto& ret : rets) fields.push_back(post(ret));
    if (fields.size() >= 2 && options_.bugs.on(Bug::kSwappedOutputOrder)) {
      // Injected bug: the returned tuple disagrees with the indices the consumers read.
      std::swap(fields[0], fields[1]);
    }
    // Consumers of output i read index i, except under kRegionOutputOffByOne.
    const bool off_by_one = fields.size() >= 2 && options_.bugs.on(Bug::kRegionOutputOffByOne);
    if (off_by_one) {
      // Injected bug: the last output is dropped; its consumers read the one before it.
      fields.pop_back();
    }
    std::vector<ir::Var> params;
    std::vector<ir::Expr> call_args;
    params.reserve(meta.args.size());
    call_args.reserve(meta.args.size());
    // Constant inputs are bound into the function, as relay::Bind does: their parameters go.
    std::unordered_map<const ir::ExprNode*, ir::Expr> bound;
    for (auto& [var, arg] : meta.args) {
      if (bound_as_constant(arg)) {
        bound.emplace(var.get(), std::move(arg));
        continue;
      }
      params.push_back(std::move(var));
      call_args.push_back(std::move(arg));
    }
    meta.args.clear();
    // Injected bug kPartitionNumbering: functions are numbered in creation order.
    const int number = options_.bugs.on(Bug::kPartitionNumbering) ? created_++ : region.id;
    std::string name = outlined_name(options_.mod_name, region.target, caller_, number);
    if (!taken_names_.insert(name).second) {
      throw PassError(kPassName, PassError::Kind::kRejectedInput,
                      "global function @" + name + " already exists (outlining region " +
                          std::to_string(region.id) + " of @" + caller_ + ")");
    }
    const bool single = fields.size() == 1;
    ir::Expr result = single ? fields[0] : ir::TupleNode::make(std::move(fields));
    if (!bound.empty()) result = ir::substitute(result, bound);
    ir::Attrs attrs{{"Inline", std::int64_t{1}},
                    {"Compiler", region.target},
                    {"global_symbol", name},
                    {"Primitive", std::int64_t{1}}};
    ir::Function fn =
        ir::FunctionNode::make(std::move(params), std::move(result), std::move(attrs));
    meta.call = ir::CallNode::make(ir::GlobalVarNode::make(name, fn->type()), std::move(call_args));
    // One TupleGetItem per output index, shared by every consumer of that output.
    ir::Expr read;
    for (std::size_t i = 0; i < rets.size(); ++i) {
      if (single) {
        read = meta.call;
      } else if (off_by_one && i + 1 == rets.size()) {
        // The index before, whose read exists already: `read` keeps it.
      } else {
        read = ir::TupleGetItemNode::make(meta.call, static_cast<int>(i));
      }
      out_[rets[i].get()] = read;
    }
    outlined_[static_cast<std::size_t>(region.id)] = Outlined{std::move(name), std::move(fn)};
  }

  ir::Expr body_;
  ir::RegionSet regions_;
  std::vector<const ir::Region*> live_regions_;
  std::string caller_;
  const Options& options_;
  std::set<std::string>& taken_names_;
  ir::NodeMap<int> input_index_;
  ir::NodeMap<ir::Expr> post_;    // every finished node's rewritten form (TVM's memo)
  std::vector<RegionMeta> meta_;  // by region id
  // What each region output's consumers read (the region's call or a TupleGetItem of it), by
  // the output (the end's argument).
  ir::NodeMap<ir::Expr> out_;
  std::vector<Outlined> outlined_;  // by region id
  int created_ = 0;                 // Bug::kPartitionNumbering only
  std::vector<Task> tasks_;
  std::vector<ir::Expr> rets_;
  ir::NodeSet ret_seen_;
  std::vector<ir::Expr> kids_;  // start()'s, kept to reuse its storage
  NestedWalk walk_;
};

// FlattenTupleOutputs then RemoveDefaultAnnotations in one rewrite over `order`
// (ir::post_order(body)). A default end on a tuple still yields a new tuple node, as TVM's two
// passes do (sharing matters to FuseOps).
//
// Unless an end on a tuple was flattened, `*new_order` receives ir::post_order() of the result
// (else it is left empty): removing an annotation only makes its argument stand for it, so the
// rewritten nodes of the kept old nodes, in the old order, are the new body's post order. That
// saves the Partitioner a second walk of the body. A flattened end breaks this (its new ends come
// before the new tuple, and the old tuple may drop out of the graph).
ir::Expr flatten_and_strip_defaults(const ir::Expr& body, const std::vector<ir::Expr>& order,
                                    std::vector<ir::Expr>* new_order) {
  bool order_valid = true;
  new_order->clear();
  new_order->reserve(order.size());
  ir::NodeMap<ir::Expr> memo(order.size());
  std::vector<ir::Expr> kids;
  for (const auto& old : order) {
    const auto* call = ir::as<ir::CallNode>(old);
    const std::string* target = call != nullptr && call->op() && ir::is_annotation(*call->op())
                                    ? call->attrs().find_string("compiler")
                                    : nullptr;
    ir::Expr result;
    if (target != nullptr) {
      // An annotation: one argument, never a function. A copy: inserting into `memo` may move
      // its slots.
      const ir::Expr kid = *memo.find(call->args()[0].get());
      const bool strip = *target == "default";
      if (const auto* tuple = is_end(old.get()) ? ir::as<ir::TupleNode>(kid) : nullptr) {
        std::vector<ir::Expr> fields;
        fields.reserve(tuple->fields().size());
        for (const auto& f : tuple->fields()) {
          fields.push_back(strip ? f : ir::compiler_end(f, *target));
        }
        result = ir::TupleNode::make(std::move(fields));
        order_valid = false;
      } else if (strip) {
        memo[old.get()] = kid;  // not a node of its own in the order
        continue;
      } else if (kid == call->args()[0]) {
        result = old;
      } else {
        result = ir::with_children(old, {kid});
      }
    } else {
      const std::size_t n = ir::num_children(*old);
      std::size_t k = 0;
      while (k < n && *memo.find(ir::child(*old, k).get()) == ir::child(*old, k)) ++k;
      if (k == n) {
        result = old;
      } else {
        kids.clear();
        kids.reserve(n);
        for (std::size_t i = 0; i < n; ++i) kids.push_back(*memo.find(ir::child(*old, i).get()));
        result = ir::with_children(old, std::move(kids));
      }
    }
    if (order_valid) new_order->push_back(result);
    memo[old.get()] = std::move(result);
  }
  if (!order_valid) new_order->clear();
  return *memo.find(body.get());
}

}  // namespace

std::string outlined_name(std::string_view mod_name, std::string_view target,
                          std::string_view caller, int region_id) {
  char id[16];
  const std::string_view digits(id, std::to_chars(id, id + sizeof id, region_id).ptr - id);
  std::string name;
  name.reserve(10 + mod_name.size() + target.size() + caller.size() + digits.size());
  name.append(mangled_module_name(mod_name)).append("_").append(target).append("_");
  name.append(caller).append("_").append(digits);
  return sanitize_name(std::move(name));
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

ir::Module partition_graph(const ir::Module& module, const Options& options) {
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
      // A new body needs its own post order, dropped once the regions are built: the rewrite's
      // when it could give one, else a walk of its own.
      std::vector<ir::Expr> flat_order;
      ir::Expr body = flatten_and_strip_defaults(fn->body(), fn->body_order(), &flat_order);
      const bool same = body == fn->body();
      if (!same && flat_order.empty()) flat_order = ir::post_order(body);
      Partitioner partitioner(body, same ? fn->body_order() : flat_order, name, options, taken);
      flat_order.clear();
      body = partitioner.run();
      out.add(name, body == fn->body()
                        ? fn
                        : ir::FunctionNode::make(fn->params(), body, fn->attrs(), nullptr));
      for (auto& o : partitioner.outlined()) {
        if (o.function) outlined.push_back(std::move(o));
      }
    }
    for (auto& o : outlined) out.add(o.name, std::move(o.function));
    return out;
  });
}

}  // namespace aotfuzz::aot

// Storage planning: storage ids per flattened tensor, outputs placed in the user's buffers,
// liveness-based reuse of the workspace, and the three storage bug switches.
#include "aot/storage_plan.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <span>

#include "aot/codegen_error.h"
#include "ir/node_map.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {
namespace {

constexpr std::size_t kMaxTensorBytes = std::size_t{1} << 30;

// A call-result tensor before it is given a buffer.
struct Token {
  int producer = 0;
  ir::Type type;
  std::size_t bytes = 0;
  int first_use = -1;
  int last_use = -1;
  std::optional<BufferRef> placed;  // an output buffer, decided before the workspace
};

// During the walk a tensor is either final (an input or a constant) or a token to be placed
// later.
struct Slot {
  bool is_token = false;
  int index = 0;  // input index, constant index or token id
  ir::Type type;
  bool is_constant = false;
};

// The slots of one value: `count` consecutive entries of the planner's slot pool.
struct Range {
  std::size_t first = 0;
  std::size_t count = 0;
};

// Whether `type` is or holds (at any depth) a tuple of no fields.
bool holds_empty_tuple(const ir::Type& type) {
  if (!type->is_tuple()) return false;
  if (type->fields().empty()) return true;
  for (const auto& f : type->fields()) {
    if (holds_empty_tuple(f)) return true;
  }
  return false;
}

std::size_t align_up(std::size_t n, std::size_t alignment) {
  return std::max(alignment, (n + alignment - 1) / alignment * alignment);
}

class Planner {
 public:
  Planner(const ir::Function& main, const StorageOptions& options,
          const std::vector<ir::Expr>& order)
      : main_(main), options_(options), order_(order) {}

  StoragePlan run() {
    if (options_.alignment == 0 || (options_.alignment & (options_.alignment - 1)) != 0) {
      throw CodegenError("storage alignment " + std::to_string(options_.alignment) +
                         " is not a power of two");
    }
    bind_params();
    walk();
    place_outputs();
    if (options_.bugs.on(Bug::kIntermediateInOutput)) misplace_intermediate();
    compute_liveness();
    allocate();
    return finish();
  }

 private:
  void bind_params() {
    int next = 0;
    for (const auto& param : main_->params()) {
      const Range range{pool_.size(), 0};
      for (auto& t : ir::flatten_tensors(param->type())) {
        tensor_bytes(t);  // validates the size
        plan_.inputs.push_back(t);
        pool_.push_back(Slot{false, next++, std::move(t)});
      }
      store_[param.get()] = Range{range.first, pool_.size() - range.first};
    }
  }

  std::span<const Slot> slots(Range r) const { return {pool_.data() + r.first, r.count}; }

  // Appends copies of the slots of `r` to the pool (indices, as the pool may grow meanwhile).
  void append(Range r) {
    for (std::size_t i = 0; i < r.count; ++i) {
      Slot copy = pool_[r.first + i];
      pool_.push_back(std::move(copy));
    }
  }

  Range lookup(const ir::Expr& e, const ir::ExprNode& user) const {
    if (const Range* r = store_.find(e.get())) return *r;
    if (e->kind() == ir::ExprKind::kVar) {
      throw CodegenError("variable " + ir::describe(*e) + " used by " + ir::describe(user) +
                         " is not a parameter of @main");
    }
    throw CodegenError(ir::describe(*e) + " is used as a value by " + ir::describe(user) +
                       "; @main may only pass tensors and tuples");
  }

  void walk() {
    const ir::Expr& body = main_->body();
    store_.reserve(order_.size() + main_->params().size());
    // Sized for the usual case so they rarely regrow. The pool can outgrow its estimate (tuples
    // copy their fields' slots), so it is only ever addressed by index, never by a held span.
    steps_.reserve(order_.size());
    tokens_.reserve(order_.size());
    pool_.reserve(2 * order_.size() + plan_.inputs.size());
    for (const auto& node : order_) {
      switch (node->kind()) {
        case ir::ExprKind::kVar:
          if (!store_.contains(node.get())) {
            throw CodegenError("variable " + ir::describe(*node) + " is not a parameter of @main");
          }
          break;
        case ir::ExprKind::kGlobalVar:
        case ir::ExprKind::kFunction:
          break;  // callees; using one as a value is caught by lookup()
        case ir::ExprKind::kConstant: {
          tensor_bytes(node->type());  // validates the size
          const int index = static_cast<int>(plan_.constants.size());
          plan_.constants.push_back(std::static_pointer_cast<const ir::ConstantNode>(node));
          store_[node.get()] = Range{pool_.size(), 1};
          pool_.push_back(Slot{false, index, node->type(), true});
          break;
        }
        case ir::ExprKind::kCall:
          add_call(std::static_pointer_cast<const ir::CallNode>(node));
          break;
        case ir::ExprKind::kTuple: {
          const std::size_t first = pool_.size();
          for (const auto& f : static_cast<const ir::TupleNode&>(*node).fields()) {
            append(lookup(f, *node));
          }
          store_[node.get()] = Range{first, pool_.size() - first};
          break;
        }
        case ir::ExprKind::kTupleGetItem: {
          // A field of a tuple is a part of the tuple's own range: nothing to copy.
          const auto& tgi = static_cast<const ir::TupleGetItemNode&>(*node);
          const Range whole = lookup(tgi.tuple(), *node);
          const auto& fields = tgi.tuple()->type()->fields();
          std::size_t begin = 0;
          for (int i = 0; i < tgi.index(); ++i) begin += ir::flat_count(fields[i]);
          const std::size_t count = ir::flat_count(fields[tgi.index()]);
          store_[node.get()] = Range{whole.first + begin, count};
          break;
        }
      }
    }
    outputs_ = lookup(body, *main_);
    if (options_.bugs.on(Bug::kEmptyTupleOutput) && holds_empty_tuple(main_->ret_type())) {
      throw CodegenError("@main's result holds an empty tuple, which has no output buffer");
    }
    for (const auto& s : slots(outputs_)) plan_.outputs.push_back(s.type);
  }

  void add_call(const ir::Call& call) {
    if (call->op()) {
      throw CodegenError("operator " + ir::describe(*call) +
                         " is called directly in @main; FuseOps must wrap it in a primitive "
                         "function");
    }
    const auto kind = call->callee()->kind();
    if (kind != ir::ExprKind::kGlobalVar && kind != ir::ExprKind::kFunction) {
      throw CodegenError("call " + ir::describe(*call) +
                         " has a callee that is neither a global nor a local function");
    }
    const int step = static_cast<int>(steps_.size());
    RawStep raw;
    raw.call = call;
    raw.args.reserve(call->args().size());
    for (const auto& arg : call->args()) raw.args.push_back(lookup(arg, *call));
    const std::size_t first = pool_.size();
    for (auto& t : ir::flatten_tensors(call->type())) {
      Token token;
      token.producer = step;
      token.type = t;
      token.bytes = tensor_bytes(t);
      pool_.push_back(Slot{true, static_cast<int>(tokens_.size()), std::move(t)});
      tokens_.push_back(std::move(token));
    }
    raw.results = Range{first, pool_.size() - first};
    store_[call.get()] = raw.results;
    steps_.push_back(std::move(raw));
  }

  // Outputs computed in place; inputs returned directly and repeated outputs become copies.
  void place_outputs() {
    std::vector<std::pair<Slot, int>> seen;  // source slot -> first output index
    const std::span<const Slot> outputs = slots(outputs_);
    for (std::size_t j = 0; j < outputs.size(); ++j) {
      const Slot& s = outputs[j];
      const int out = static_cast<int>(j);
      auto earlier = std::find_if(seen.begin(), seen.end(), [&](const auto& p) {
        return p.first.is_token == s.is_token && p.first.is_constant == s.is_constant &&
               p.first.index == s.index;
      });
      if (earlier != seen.end()) {
        // Bug kDroppedDuplicateOutput: the repeat is never written.
        if (!options_.bugs.on(Bug::kDroppedDuplicateOutput)) {
          plan_.copies.push_back(
              OutputCopy{out, TensorRef{{BufferKind::kOutput, earlier->second}, s.type}});
        }
        continue;
      }
      seen.emplace_back(s, out);
      if (s.is_token) {
        tokens_[s.index].placed = BufferRef{BufferKind::kOutput, out};
        output_producer_.emplace_back(out, tokens_[s.index].producer);
      } else {
        plan_.copies.push_back(OutputCopy{out, resolve(s)});
      }
    }
  }

  // Bug kIntermediateInOutput: an intermediate goes into an output buffer that a later call
  // writes. Preferred: a pair where the intermediate is still read after that write (so the bug
  // shows); else any pair. No pair (nothing fits): the switch has no effect.
  void misplace_intermediate() {
    compute_liveness();
    for (int pass = 0; pass < 2; ++pass) {
      for (auto& token : tokens_) {
        if (token.placed) continue;
        for (const auto& [out, producer] : output_producer_) {
          if (producer <= token.producer) continue;
          if (tensor_bytes(plan_.outputs[out]) < token.bytes) continue;
          if (pass == 0 && token.last_use <= producer) continue;
          token.placed = BufferRef{BufferKind::kOutput, out};
          return;
        }
      }
    }
  }

  void compute_liveness() {
    for (auto& t : tokens_) t.first_use = t.last_use = -1;
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      for (const Range arg : steps_[s].args) {
        for (const auto& slot : slots(arg)) {
          if (!slot.is_token) continue;
          Token& t = tokens_[slot.index];
          const int step = static_cast<int>(s);
          if (t.first_use < 0) t.first_use = step;
          t.last_use = std::max(t.last_use, step);
        }
      }
    }
  }

  void allocate() {
    // Bug kReuseLiveStorage: a buffer is released after its first reader, not its last.
    const bool early_release = options_.bugs.on(Bug::kReuseLiveStorage);
    // The tokens released after each step, in token order: released[release_at[s] ..
    // release_at[s + 1]) (a counting sort by step).
    std::vector<int> until(tokens_.size(), -1);
    std::vector<std::size_t> release_at(steps_.size() + 1, 0);
    for (std::size_t i = 0; i < tokens_.size(); ++i) {
      const Token& t = tokens_[i];
      if (t.placed) continue;
      ++plan_.num_intermediate_tensors;
      until[i] = t.last_use < 0 ? t.producer : (early_release ? t.first_use : t.last_use);
      ++release_at[until[i] + 1];
    }
    for (std::size_t s = 0; s < steps_.size(); ++s) release_at[s + 1] += release_at[s];
    std::vector<int> released(release_at.back());
    {
      std::vector<std::size_t> next(release_at.begin(), release_at.end() - 1);
      for (std::size_t i = 0; i < tokens_.size(); ++i) {
        if (until[i] >= 0) released[next[until[i]]++] = static_cast<int>(i);
      }
    }
    std::vector<int> free_sids;
    for (std::size_t s = 0; s < steps_.size(); ++s) {
      for (const auto& slot : slots(steps_[s].results)) {
        Token& t = tokens_[slot.index];
        if (t.placed) continue;
        t.placed = BufferRef{BufferKind::kIntermediate, take_buffer(t.bytes, free_sids)};
      }
      if (!options_.reuse) continue;
      for (std::size_t k = release_at[s]; k < release_at[s + 1]; ++k) {
        free_sids.push_back(tokens_[released[k]].placed->index);
      }
    }
    std::size_t offset = 0;
    std::size_t last_size = 0;
    for (auto& b : plan_.buffers) {
      b.offset = offset;
      const std::size_t size = align_up(b.bytes, options_.alignment);
      if (offset > std::numeric_limits<std::size_t>::max() - size) {
        throw CodegenError("workspace size overflows");
      }
      offset += size;
      last_size = size;
    }
    plan_.workspace_bytes =
        options_.bugs.on(Bug::kWorkspaceUndersized) ? offset - last_size : offset;
  }

  int take_buffer(std::size_t bytes, std::vector<int>& free_sids) {
    auto best = free_sids.end();
    for (auto it = free_sids.begin(); it != free_sids.end(); ++it) {
      const auto& cand = plan_.buffers[*it];
      if (cand.bytes < bytes) continue;
      if (best == free_sids.end() || cand.bytes < plan_.buffers[*best].bytes ||
          (cand.bytes == plan_.buffers[*best].bytes && *it < *best)) {
        best = it;
      }
    }
    if (best != free_sids.end()) {
      int sid = *best;
      free_sids.erase(best);
      return sid;
    }
    const int sid = static_cast<int>(plan_.buffers.size());
    plan_.buffers.push_back(WorkspaceBuffer{sid, bytes, 0});
    return sid;
  }

  TensorRef resolve(const Slot& s) const {
    if (s.is_constant) return TensorRef{{BufferKind::kConstant, s.index}, s.type};
    if (!s.is_token) return TensorRef{{BufferKind::kInput, s.index}, s.type};
    return TensorRef{*tokens_[s.index].placed, s.type};
  }

  StoragePlan finish() {
    plan_.steps.reserve(steps_.size());
    for (auto& raw : steps_) {
      CallStep step;
      step.call = std::move(raw.call);
      step.args.reserve(raw.args.size());
      for (const Range arg : raw.args) {
        std::vector<TensorRef> refs;
        refs.reserve(arg.count);
        for (const auto& s : slots(arg)) refs.push_back(resolve(s));
        step.args.push_back(std::move(refs));
      }
      step.results.reserve(raw.results.count);
      for (const auto& s : slots(raw.results)) step.results.push_back(resolve(s));
      plan_.steps.push_back(std::move(step));
    }
    return std::move(plan_);
  }

  struct RawStep {
    ir::Call call;
    std::vector<Range> args;
    Range results;
  };

  const ir::Function& main_;
  const StorageOptions& options_;
  const std::vector<ir::Expr>& order_;  // ir::post_order(main_->body())
  StoragePlan plan_;
  std::vector<Slot> pool_;    // the slots of every value, by Range
  ir::NodeMap<Range> store_;  // the slots of each value node of @main
  std::vector<Token> tokens_;
  std::vector<RawStep> steps_;
  Range outputs_;
  std::vector<std::pair<int, int>> output_producer_;  // (output, producer step), output order
};

}  // namespace

std::string to_string(const BufferRef& ref) {
  switch (ref.kind) {
    case BufferKind::kInput:
      return "input " + std::to_string(ref.index);
    case BufferKind::kOutput:
      return "output " + std::to_string(ref.index);
    case BufferKind::kConstant:
      return "constant " + std::to_string(ref.index);
    case BufferKind::kIntermediate:
      break;
  }
  return "sid_" + std::to_string(ref.index);
}

std::size_t tensor_bytes(const ir::Type& tensor_type) {
  if (!tensor_type || !tensor_type->is_tensor()) {
    throw CodegenError("expected a tensor type, got " +
                       (tensor_type ? ir::type_to_string(tensor_type) : std::string("nothing")));
  }
  std::size_t n = ir::dtype_bytes(tensor_type->dtype());
  for (std::int64_t d : tensor_type->shape()) {
    if (d < 0) throw CodegenError("negative dimension in " + ir::type_to_string(tensor_type));
    // n <= kMaxTensorBytes here, so the 128-bit product is exact: the same test as
    // n > kMaxTensorBytes / d, without a division per dimension.
    const unsigned __int128 product =
        static_cast<unsigned __int128>(n) * static_cast<std::uint64_t>(d);
    if (product > kMaxTensorBytes) {
      throw CodegenError("tensor " + ir::type_to_string(tensor_type) + " is larger than 1 GiB");
    }
    n = static_cast<std::size_t>(product);
  }
  if (n > kMaxTensorBytes) {
    throw CodegenError("tensor " + ir::type_to_string(tensor_type) + " is larger than 1 GiB");
  }
  return n;
}

StoragePlan plan_storage(const ir::Function& main, const StorageOptions& options) {
  if (!main) throw CodegenError("no @main to plan");
  return Planner(main, options, main->body_order()).run();
}

StoragePlan plan_storage(const ir::Function& main, const StorageOptions& options,
                         const std::vector<ir::Expr>& order) {
  if (!main) throw CodegenError("no @main to plan");
  return Planner(main, options, order).run();
}

}  // namespace aotfuzz::aot

// The graph-aware reducer's driver: the reductions of reduction_passes.def (one per file) tried in
// rounds, each step the first kept candidate in candidate order; a verdict cache keyed by graph
// structure; the candidates of a batch judged by a pool of workers, the choice deterministic
// whatever the number of workers.
#include "reduce/reducer.h"

#include <algorithm>
#include <boost/asio/post.hpp>
#include <boost/asio/thread_pool.hpp>
#include <latch>
#include <optional>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/error.h"
#include "ir/regions.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "reduce/reductions.h"
#include "reduce/rewrite.h"
#include "reduce/verdict_cache.h"

namespace aotfuzz::reduce {
namespace {

using Clock = std::chrono::steady_clock;
/// Builds one candidate; may throw ir::Error when the step does not apply.
using CandidateFn = ReductionCandidate;

// Whether a parameter tensor of @main has a rank below `min_rank`.
bool has_rank_below(const ir::Module& m, std::size_t min_rank) {
  for (const auto& p : main_of(m)->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) {
      if (t->shape().size() < min_rank) return true;
    }
  }
  return false;
}

// Builds and verifies a candidate; nullopt when the step does not apply.
std::optional<ir::Module> materialize(const CandidateFn& fn) {
  try {
    ir::Module c = fn();
    ir::verify(c);
    return c;
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

// One run of reduce(): the module reduced so far, the verdicts of the candidates so far, and the
// figures it reports.
class Reduction {
 public:
  Reduction(const Predicate& keep, const ReduceOptions& options)
      : keep_(keep),
        options_(options),
        t0_(Clock::now()),
        jobs_(static_cast<std::size_t>(std::max(1, options.jobs))) {
    // Workers for the whole reduction: a batch's candidates but the first go to them, so a step
    // starts no thread (a reduction judges thousands of batches).
    if (jobs_ > 1) pool_.emplace(jobs_ - 1);
  }
  ~Reduction() {
    if (pool_) pool_->join();
  }
  Reduction(const Reduction&) = delete;
  Reduction& operator=(const Reduction&) = delete;

  ReduceResult run(const ir::Module& module) {
    result_.module = module;
    result_.before = result_.after = module_size(module);
    ++result_.evaluated;
    if (!interesting(module)) return finish();
    cache_.insert(module, ir::structural_hash(module), true);
    current_ = module;
    current_cx_ = complexity(current_);
    const std::vector<ReductionPass> passes = passes_to_run();
    for (bool changed = true; changed && !cut_;) {
      changed = false;
      for (ReductionPass pass : passes) {
        if (reduce_with(pass)) changed = true;
        if (cut_) break;
      }
    }
    result_.minimal = !cut_;
    return finish();
  }

 private:
  // A candidate of a batch: its position in its pass's list, and its verdict once known.
  struct Candidate {
    ir::Module module;
    std::size_t hash;
    std::size_t pos;
    std::optional<bool> verdict;
  };

  std::vector<ReductionPass> passes_to_run() const {
    std::vector<ReductionPass> passes = options_.passes;
    if (passes.empty()) {
      for (const auto& row : reduction_pass_table()) passes.push_back(row.pass);
    }
    return passes;
  }

  bool interesting(const ir::Module& m) const {
    try {
      return keep_(m);
    } catch (...) {
      return false;
    }
  }

  bool should_stop() const {
    if (options_.stop != nullptr && options_.stop->load()) return true;
    return options_.time_limit.count() > 0 && Clock::now() - t0_ >= options_.time_limit;
  }

  // Takes steps of `pass`, each its first candidate (in candidate order) that is kept, going on
  // near where the last one was found, until none is or the reduction is cut short. Whether it
  // took one.
  bool reduce_with(ReductionPass pass) {
    bool stepped = false;
    std::size_t resume = 0;
    while (!cut_) {
      std::vector<CandidateFn> fns;
      reduction_pass_table().at(static_cast<std::size_t>(pass)).enumerate(current_, fns);
      std::optional<Candidate> kept = first_kept(fns, std::min(resume, fns.size()));
      if (!kept) break;
      resume = kept->pos;
      accept(pass, std::move(kept->module));
      stepped = true;
    }
    return stepped;
  }

  // The first candidate from `idx` on that is kept, judged a batch at a time; nullopt when none
  // is, or when the reduction is cut short first (cut_).
  std::optional<Candidate> first_kept(const std::vector<CandidateFn>& fns, std::size_t idx) {
    while (idx < fns.size()) {
      if (should_stop()) {
        cut_ = true;
        return std::nullopt;
      }
      std::vector<Candidate> batch = next_batch(fns, idx);
      judge(batch);
      for (auto& c : batch) {
        if (*c.verdict) return std::move(c);
      }
    }
    return std::nullopt;
  }

  bool below_min_rank(const ir::Module& m) const {
    return options_.min_rank > 0 && has_rank_below(m, options_.min_rank);
  }

  // The candidates from `idx` on, in order, up to `jobs` the cache cannot answer, or fewer ending
  // at one the cache says is kept. Left out: candidates that do not apply, do not lower
  // complexity(), or that the cache says are not kept. Advances `idx` past them.
  std::vector<Candidate> next_batch(const std::vector<CandidateFn>& fns, std::size_t& idx) {
    std::vector<Candidate> batch;
    std::size_t pending = 0;
    while (idx < fns.size() && pending < jobs_) {
      const std::size_t pos = idx++;
      auto c = materialize(fns[pos]);
      if (!c || !(complexity(*c) < current_cx_) || below_min_rank(*c)) {
        ++result_.rejected;
        continue;
      }
      const std::size_t hash = ir::structural_hash(*c);
      if (const std::optional<bool> known = cache_.find(*c, hash)) {
        ++result_.cache_hits;
        if (!*known) continue;
        batch.push_back({std::move(*c), hash, pos, true});
        break;
      }
      batch.push_back({std::move(*c), hash, pos, std::nullopt});
      ++pending;
    }
    return batch;
  }

  // Judges the candidates of `batch` the cache could not answer, in parallel: the pool's workers
  // take all but the first, which this thread judges.
  void judge(std::vector<Candidate>& batch) {
    std::vector<Candidate*> todo;
    for (auto& c : batch) {
      if (!c.verdict) todo.push_back(&c);
    }
    std::vector<char> answers(todo.size(), 0);
    if (todo.size() > 1) {
      std::latch done(static_cast<std::ptrdiff_t>(todo.size() - 1));
      for (std::size_t t = 1; t < todo.size(); ++t) {
        boost::asio::post(*pool_, [&, t] {
          answers[t] = interesting(todo[t]->module) ? 1 : 0;
          done.count_down();
        });
      }
      answers[0] = interesting(todo[0]->module) ? 1 : 0;
      done.wait();
    } else if (!todo.empty()) {
      answers[0] = interesting(todo[0]->module) ? 1 : 0;
    }
    for (std::size_t t = 0; t < todo.size(); ++t) {
      todo[t]->verdict = answers[t] != 0;
      cache_.insert(todo[t]->module, todo[t]->hash, answers[t] != 0);
    }
    result_.evaluated += todo.size();
  }

  void accept(ReductionPass pass, ir::Module m) {
    current_ = std::move(m);
    current_cx_ = complexity(current_);
    result_.module = current_;
    ++result_.steps;
    ++result_.steps_per_pass[std::string(reduction_pass_table()[static_cast<unsigned>(pass)].name)];
    if (options_.on_step) options_.on_step(pass, current_);
  }

  ReduceResult finish() {
    result_.after = module_size(result_.module);
    result_.elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - t0_);
    return std::move(result_);
  }

  const Predicate& keep_;
  const ReduceOptions& options_;
  const Clock::time_point t0_;
  const std::size_t jobs_;
  VerdictCache cache_;
  std::optional<boost::asio::thread_pool> pool_;
  ir::Module current_;
  Complexity current_cx_{};
  bool cut_ = false;
  ReduceResult result_;
};

}  // namespace

const std::vector<ReductionPassInfo>& reduction_pass_table() {
  static const std::vector<ReductionPassInfo> kTable = {
#define AOTFUZZ_REDUCTION(id, name, enumerator, description) \
  {ReductionPass::id, name, &enumerator, description},
#include "reduce/reduction_passes.def"
#undef AOTFUZZ_REDUCTION
  };
  return kTable;
}

std::optional<ReductionPass> parse_reduction_pass(std::string_view name) {
  for (const auto& row : reduction_pass_table()) {
    if (row.name == name) return row.pass;
  }
  return std::nullopt;
}

ModuleSize module_size(const ir::Module& module) {
  ModuleSize s;
  s.inputs = module.main()->params().size();
  for (const auto& [name, fn] : module.functions()) {
    for (const auto& n : ir::post_order(fn->body(), /*enter_functions=*/true)) {
      const auto* call = ir::as<ir::CallNode>(n);
      if (call == nullptr || !call->op()) continue;
      if (ir::is_elementwise(*call->op())) ++s.ops;
      if (ir::is_annotation(*call->op())) ++s.annotations;
    }
  }
  for (const auto& n : ir::post_order(module.main()->body())) s.nodes += is_value_node(n) ? 1 : 0;
  return s;
}

Complexity complexity(const ir::Module& module) {
  Complexity c{};
  const auto& main = module.main();
  for (const auto& n : ir::post_order(main->body())) {
    if (n->kind() == ir::ExprKind::kVar) continue;
    c[0] += 1 + ir::children(*n).size();
  }
  c[1] = main->params().size();
  c[2] = targets_of(module).size();
  for (const auto& p : main->params()) {
    for (const auto& t : ir::flatten_tensors(p->type())) {
      c[3] += t->dtype() != ir::DType::kFloat32 ? 1 : 0;
      c[4] += t->shape().size();
      c[5] += static_cast<std::uint64_t>(std::max<std::int64_t>(t->num_elements(), 0));
    }
  }
  return c;
}

ReduceResult reduce(const ir::Module& module, const Predicate& keep, const ReduceOptions& options) {
  return Reduction(keep, options).run(module);
}

Predicate same_signature(const oracle::CaseOptions& options, std::string signature) {
  return [options, signature = std::move(signature)](const ir::Module& m) {
    return oracle::signature(oracle::run_case(m, options).verdict) == signature;
  };
}

}  // namespace aotfuzz::reduce

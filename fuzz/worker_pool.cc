// A campaign's worker threads and the phases of their chunks of cases.
#include "fuzz/worker_pool.h"

#include <algorithm>
#include <exception>
#include <new>
#include <span>
#include <string>
#include <utility>

#include "fuzz/campaign_cases.h"
#include "fuzz/crash_journal.h"
#include "oracle/case_flow.h"
#include "oracle/in_process_probe.h"
#include "reference/footprint.h"

namespace aotfuzz::fuzz {
namespace {

std::uint64_t micros_since(WorkerPool::Clock::time_point t0) {
  return static_cast<std::uint64_t>(
      std::chrono::duration_cast<std::chrono::microseconds>(WorkerPool::Clock::now() - t0).count());
}

}  // namespace

WorkerPool::WorkerPool(const CampaignOptions& options, bool batched, std::uint64_t first_case,
                       std::set<std::uint64_t> judged_before,
                       std::optional<Clock::time_point> deadline, CaseCounter& counter,
                       CampaignLog& log, CaseSink& sink, std::function<WorkerTools()> make_tools)
    : opt_(options),
      batched_(batched),
      judged_before_(std::move(judged_before)),
      deadline_(deadline),
      counter_(counter),
      log_(log),
      sink_(sink),
      make_tools_(std::move(make_tools)),
      next_(first_case) {}

WorkerPool::~WorkerPool() { join(); }

void WorkerPool::start(int jobs) {
  jobs_ = jobs;
  for (int slot = 0; slot < jobs; ++slot) threads_.emplace_back([this, slot] { work(slot); });
}

void WorkerPool::open() {
  std::lock_guard lock(mu_);
  open_ = true;
  changed_.notify_all();
}

bool WorkerPool::wait_finished(std::chrono::milliseconds timeout) {
  std::unique_lock lock(mu_);
  return changed_.wait_for(lock, timeout, [this] { return finished_ >= jobs_; });
}

void WorkerPool::join() {
  for (auto& t : threads_) {
    if (t.joinable()) t.join();
  }
}

void WorkerPool::check_stop() {
  if (stop_requested(opt_)) stopping_ = true;
  if (deadline_ && Clock::now() >= *deadline_) stopping_ = true;
}

void WorkerPool::work(int slot) {
  enter_worker_slot(opt_.journal, slot);
  {
    std::unique_lock lock(mu_);
    changed_.wait(lock, [this] { return open_; });
  }
  WorkerTools tools = make_tools_();
  if (!batched_ && opt_.executor == ExecutorChoice::kBatched && tools.system &&
      tools.system->preparing_batch()) {
    overlapped_ = true;
    work_overlapped(tools, slot);
  } else {
    work_chunks(tools, slot);
  }
  std::lock_guard lock(mu_);
  ++finished_;
  changed_.notify_all();
}

bool WorkerPool::take_chunk(std::uint64_t size, std::uint64_t& k0, std::uint64_t& k1) {
  check_stop();
  k0 = next_.fetch_add(size);
  if (opt_.max_cases && k0 >= *opt_.max_cases) return false;
  k1 = k0 + size;
  if (opt_.max_cases) k1 = std::min(k1, *opt_.max_cases);
  if (stopping_) {
    for (std::uint64_t k = k0; k < k1; ++k) sink_.dropped(k);
    return false;
  }
  return true;
}

// Chunk k's TVM work is submitted before chunk k-1's programs run: the system works on the one
// while the worker compiles, runs and judges the other.
void WorkerPool::work_overlapped(WorkerTools& tools, int slot) {
  struct Chunk {
    std::uint64_t k0 = 0, k1 = 0;
    std::vector<Item> items;
    std::unique_ptr<oracle::PreparingBatch> batch;
  };
  std::optional<Chunk> pending;
  // Case by case, each as soon as the system is done with it: its verdict does not wait for
  // the rest of its chunk, and the system builds the next case while this one runs.
  auto finish = [&](Chunk& c) {
    for (auto& it : c.items) {
      if (it.in_batch >= 0) {
        const auto i = static_cast<std::size_t>(it.in_batch);
        c.batch->wait(i);
        InProcessSteps steps(opt_.journal, slot, it.k);
        try {
          it.prepared = c.batch->finish(i, it.result);
        } catch (const std::bad_alloc&) {
          dropped_for_memory(it);
        }
      }
      run_prepared(std::span<Item>(&it, 1), it.k, it.k + 1, *tools.executor, slot);
      hand_over(std::span<Item>(&it, 1));
    }
  };
  std::uint64_t size = 1;
  for (;;) {
    Chunk c;
    if (!take_chunk(size, c.k0, c.k1)) break;
    c.batch = tools.system->preparing_batch();
    c.items.resize(c.k1 - c.k0);
    for (std::uint64_t k = c.k0; k < c.k1; ++k) {
      c.items[k - c.k0].k = k;
      prepare(c.items[k - c.k0], tools, slot, c.batch.get());
    }
    c.batch->submit();
    if (pending) finish(*pending);
    pending = std::move(c);
    size = std::min(kOverlappedCases, size * 2);
  }
  if (pending) finish(*pending);
}

void WorkerPool::work_chunks(WorkerTools& tools, int slot) {
  std::uint64_t chunk = batched_ ? kFirstBatchCases : 1;
  std::uint64_t k0 = 0, k1 = 0;
  while (take_chunk(chunk, k0, k1)) {
    run_chunk(k0, k1, tools, slot);
    if (batched_) chunk = std::min(kBatchCases, chunk * 2);
  }
}

void WorkerPool::run_chunk(std::uint64_t k0, std::uint64_t k1, WorkerTools& tools, int slot) {
  std::vector<Item> items(k1 - k0);
  for (std::uint64_t k = k0; k < k1; ++k) {
    items[k - k0].k = k;
    prepare(items[k - k0], tools, slot);
  }
  run_prepared(items, k0, k1, *tools.executor, slot);
  hand_over(items);
}

void WorkerPool::dropped_for_memory(Item& it) {
  // The machine, not the pipeline: the case is dropped, the campaign goes on.
  it.generated = false;
  it.prepared.reset();
  log_.harness_problem("case " + std::to_string(shard_case(opt_.shard, it.k)) +
                       ": out of memory while preparing it (" +
                       oracle::replay_flags(it.spec.options) + ")");
}

void WorkerPool::prepare(Item& it, WorkerTools& tools, int slot, oracle::PreparingBatch* batch) {
  const std::uint64_t k = it.k;
  const std::uint64_t index = shard_case(opt_.shard, k);
  // A stop request (SIGTERM) is honoured within a case, not at the end of a batch.
  if (stop_requested(opt_)) return;
  // Judged and counted by a campaign process that a later case took down.
  if (!judged_before_.empty() && judged_before_.count(k)) return;
  CrashJournal* journal = opt_.journal;
  if (journal != nullptr && journal->is_skipped(k)) return;
  if (journal != nullptr && (journal->is_culprit(k) || journal->probe_every_case.load())) {
    judge_culprit(it, slot);
    return;
  }
  InProcessSteps steps(journal, slot, k);
  const auto t0 = Clock::now();
  if (!generate(it, index)) return;
  it.gen_us = micros_since(t0);
  // Knobs can ask for graphs too large to hold: not the pipeline's fault, so not judged.
  if (auto why = reference::over_memory_budget(it.spec.module, opt_.base.memory_budget)) {
    it.generated = false;
    if (counter_.add_over_budget()) {
      log_.info("case " + std::to_string(index) + " skipped, and any others like it: " + *why);
    }
    return;
  }
  if (tools.system) it.spec.options.sut = tools.system;
  steps.set_budget(oracle::in_process_budget_for(it.spec.module, it.spec.options));
  try {
    if (batch != nullptr) {
      it.in_batch = static_cast<long>(batch->add(it.spec.module, it.spec.options, it.result));
    } else {
      it.prepared = oracle::prepare_case(it.spec.module, it.spec.options, it.result);
    }
  } catch (const std::bad_alloc&) {
    dropped_for_memory(it);
  }
}

bool WorkerPool::generate(Item& it, std::uint64_t index) {
  try {
    it.spec = make_case(opt_, index);
    it.generated = true;
    return true;
  } catch (const std::exception& e) {
    counter_.add_generator_error();
    log_.warn("generator failed on case " + std::to_string(index) + ": " + e.what());
    return false;
  }
}

// A case that took an earlier campaign child down (or any case, once too many did): its
// in-process steps are probed in a child process first, so that its crash or hang is its
// verdict. When they do not crash there (a memory error whose effect depends on the heap), it is
// judged in this process under its slot: a second crash makes the supervisor skip it.
void WorkerPool::judge_culprit(Item& it, int slot) {
  const std::uint64_t k = it.k;
  const std::uint64_t index = shard_case(opt_.shard, k);
  it.spec = make_case(opt_, index);
  it.generated = true;
  it.spec.options.isolate_in_process = true;
  if (auto v = oracle::probe_in_process(it.spec.module, it.spec.options)) {
    it.result.verdict = std::move(*v);
    return;
  }
  if (opt_.journal->is_culprit(k)) {
    ++opt_.journal->unreproduced;
    log_.warn("case " + std::to_string(index) +
              " took the campaign down but does not crash alone (" + gen_command(opt_, it.spec) +
              " | aotfuzz run /dev/stdin " + oracle::replay_flags(it.spec.options) +
              "); judging it in this process");
  }
  InProcessSteps steps(opt_.journal, slot, k);
  oracle::CaseOptions o = it.spec.options;
  o.isolate_in_process = false;
  it.result = oracle::run_case(it.spec.module, o);
}

void WorkerPool::run_prepared(std::span<Item> items, std::uint64_t k0, std::uint64_t k1,
                              oracle::Executor& executor, int slot) {
  std::vector<oracle::PreparedCase> to_run;
  std::vector<Item*> ran;
  for (auto& it : items) {
    if (!it.prepared) continue;
    to_run.push_back(std::move(*it.prepared));
    ran.push_back(&it);
  }
  if (to_run.empty()) return;
  try {
    const auto raws = executor.run(to_run);
    for (std::size_t j = 0; j < to_run.size(); ++j) {
      Item& it = *ran[j];
      // Stopped before it ran: neither judged nor counted, as if never started.
      if (raws[j].cancelled) {
        it.generated = false;
        continue;
      }
      InProcessSteps steps(opt_.journal, slot, it.k);
      oracle::judge_case(it.spec.module, it.spec.options, to_run[j], raws[j], it.result,
                         dynamic_cast<oracle::SingleProgramExecutor*>(&executor));
    }
  } catch (const std::bad_alloc&) {
    for (Item* it : ran) it->generated = false;
    log_.harness_problem("cases " + std::to_string(k0) + ".." + std::to_string(k1 - 1) +
                         ": out of memory while running them");
  }
}

void WorkerPool::hand_over(std::span<Item> items) {
  for (auto& it : items) {
    if (it.generated) {
      sink_.judged(it.k, it.spec, it.result, it.gen_us);
    } else {
      sink_.dropped(it.k);
    }
  }
}

}  // namespace aotfuzz::fuzz

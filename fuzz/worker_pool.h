// The workers of a campaign: threads that take the shard's cases in chunks from one counter, and
// bring each case to its verdict (generated and prepared in process, the compiled ones run through
// the worker's executor in one call, then judged), or drop it. Batched chunks start small, so that
// the first verdicts (and findings) come early, and grow to amortize a batch's fixed costs.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <thread>
#include <vector>

#include "fuzz/campaign_log.h"
#include "fuzz/campaign_types.h"
#include "fuzz/case_counter.h"
#include "oracle/executor.h"
#include "oracle/oracle.h"
#include "oracle/sut.h"

namespace aotfuzz::fuzz {

/// What a worker runs its cases with, made on its own thread.
struct WorkerTools {
  /// Its own executor (a batched one starts its own runner process).
  std::unique_ptr<oracle::Executor> executor;
  /// The worker's own system under test (SystemUnderTest::for_worker), given to each of its
  /// cases; null: the cases keep the campaign's.
  std::shared_ptr<const oracle::SystemUnderTest> system;
};

/// Where the workers' cases go. Called on the workers' threads, in case order within a chunk.
class CaseSink {
 public:
  virtual ~CaseSink() = default;
  /// Case k (shard-local) has its verdict; `generation_us`: the time its generation took.
  virtual void judged(std::uint64_t k, const CaseSpec& spec, const oracle::CaseResult& result,
                      std::uint64_t generation_us) = 0;
  /// Case k gets no verdict (stopped before it ran, judged by an earlier child, skipped, not
  /// generated, over the memory budget, dropped for want of memory).
  virtual void dropped(std::uint64_t k) = 0;
};

class WorkerPool {
 public:
  using Clock = std::chrono::steady_clock;

  /// Workers take cases from `first_case` on, except those in `judged_before` (an earlier child
  /// judged them), and stop taking them at `deadline` (nullopt: none). `batched`: their chunks
  /// grow from kFirstBatchCases to kBatchCases cases (else one case each). `make_tools` is called
  /// on each worker's thread.
  WorkerPool(const CampaignOptions& options, bool batched, std::uint64_t first_case,
             std::set<std::uint64_t> judged_before, std::optional<Clock::time_point> deadline,
             CaseCounter& counter, CampaignLog& log, CaseSink& sink,
             std::function<WorkerTools()> make_tools);
  ~WorkerPool();
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  /// Starts `jobs` workers, which wait for open() before taking a case.
  void start(int jobs);
  void open();
  /// Waits up to `timeout` for every worker to end; true once they have.
  bool wait_finished(std::chrono::milliseconds timeout);
  void join();

  /// No new chunk is taken once stopping: set here when the campaign's stop request has come or
  /// the deadline has passed, or by request_stop().
  void check_stop();
  void request_stop() { stopping_ = true; }
  /// Whether a worker prepared its cases in overlapped batches.
  bool overlapped() const { return overlapped_; }
  bool stopping() const { return stopping_; }

 private:
  // One case of a chunk on its way through the phases.
  struct Item {
    std::uint64_t k = 0;
    bool generated = false;
    CaseSpec spec;
    oracle::CaseResult result;
    std::optional<oracle::PreparedCase> prepared;
    std::uint64_t gen_us = 0;
    // Its index in the chunk's PreparingBatch (-1: not in one).
    long in_batch = -1;
  };

  void work(int slot);
  // The next chunk of at most `size` cases, [k0, k1); false when there is none to take.
  bool take_chunk(std::uint64_t size, std::uint64_t& k0, std::uint64_t& k1);
  // Chunks prepared, run and judged one after another (batched chunks grow).
  void work_chunks(WorkerTools& tools, int slot);
  // Chunks whose system work (SystemUnderTest::preparing_batch) overlaps the previous chunk's
  // programs.
  void work_overlapped(WorkerTools& tools, int slot);
  void run_chunk(std::uint64_t k0, std::uint64_t k1, WorkerTools& tools, int slot);
  // Generates and prepares case k in process, or adds it to `batch`; it is left not generated
  // when it gets no verdict.
  void prepare(Item& it, WorkerTools& tools, int slot, oracle::PreparingBatch* batch = nullptr);
  void dropped_for_memory(Item& it);
  bool generate(Item& it, std::uint64_t index);
  void judge_culprit(Item& it, int slot);
  // Runs the prepared cases of a chunk through the executor in one call and judges them.
  void run_prepared(std::span<Item> items, std::uint64_t k0, std::uint64_t k1,
                    oracle::Executor& executor, int slot);
  void hand_over(std::span<Item> items);

  static constexpr std::uint64_t kFirstBatchCases = 4;
  // A batch's fixed costs (a fork, libtcc's start and the system headers, the child's buffers)
  // still showed between 64, 128, 256 and 512 cases; a batch of 512 takes about half a second.
  static constexpr std::uint64_t kBatchCases = 512;
  // Overlapped chunks start at one case (the first verdict comes early) and double to this: past
  // it a chunk only delays its verdicts, the overlap being the same.
  static constexpr std::uint64_t kOverlappedCases = 8;

  const CampaignOptions& opt_;
  const bool batched_;
  // Read-only once the workers run.
  const std::set<std::uint64_t> judged_before_;
  const std::optional<Clock::time_point> deadline_;
  CaseCounter& counter_;
  CampaignLog& log_;
  CaseSink& sink_;
  const std::function<WorkerTools()> make_tools_;
  std::atomic<std::uint64_t> next_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> overlapped_{false};
  std::mutex mu_;
  std::condition_variable changed_;
  bool open_ = false;
  int jobs_ = 0;
  int finished_ = 0;
  std::vector<std::thread> threads_;
};

}  // namespace aotfuzz::fuzz

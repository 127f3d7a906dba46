#include "tests/support/systems.h"

#include <future>
#include <vector>

#include "oracle/case_flow.h"

namespace aotfuzz::test_support {

std::optional<oracle::PreparedCase> UnbatchedBuiltin::prepare(
    const ir::Module& annotated, const oracle::CaseOptions& options, oracle::CaseResult& r,
    const oracle::CaseReference* reference, const oracle::StageMark* mark) const {
  auto prepared = oracle::prepare_builtin_case(annotated, options, r, reference, mark);
  r.system_steps = {{"own step", std::chrono::microseconds(100)}};
  return prepared;
}

namespace {

// prepare's work for each added case, done on another thread once submitted.
class ThreadedBatch final : public oracle::PreparingBatch {
 public:
  explicit ThreadedBatch(const UnbatchedBuiltin& system) : system_(system) {}
  ~ThreadedBatch() override {
    if (work_.valid()) work_.wait();
  }

  std::size_t add(const ir::Module& annotated, const oracle::CaseOptions& options,
                  oracle::CaseResult&) override {
    cases_.push_back({annotated, options, {}, std::nullopt});
    return cases_.size() - 1;
  }
  void submit() override {
    work_ = std::async(std::launch::async, [this] {
      for (auto& c : cases_) {
        c.prepared = system_.prepare(c.annotated, c.options, c.result, nullptr, nullptr);
      }
    });
  }
  void wait(std::size_t) override {
    if (work_.valid()) work_.get();
  }
  std::optional<oracle::PreparedCase> finish(std::size_t i, oracle::CaseResult& r) override {
    wait(i);
    r = cases_.at(i).result;
    return cases_.at(i).prepared;
  }

 private:
  struct Case {
    ir::Module annotated;
    oracle::CaseOptions options;
    oracle::CaseResult result;
    std::optional<oracle::PreparedCase> prepared;
  };
  const UnbatchedBuiltin& system_;
  std::vector<Case> cases_;
  std::future<void> work_;
};

}  // namespace

std::unique_ptr<oracle::PreparingBatch> UnbatchedBuiltin::preparing_batch() const {
  if (!overlapped_) return nullptr;
  ++*batches_;
  return std::make_unique<ThreadedBatch>(*this);
}

}  // namespace aotfuzz::test_support

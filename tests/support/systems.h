// A stand-in system under test for tests of what a campaign does with a system's answers: the
// builtin pipeline, run like TVM's lane (each case its own program, gcc deciding its verdicts),
// with the choices a system makes for a campaign set by the test.
#pragma once

#include <atomic>
#include <memory>

#include "oracle/sut.h"

namespace aotfuzz::test_support {

class UnbatchedBuiltin final : public oracle::SystemUnderTest {
 public:
  /// `overlapped`: it offers a preparing batch, whose work (prepare's) runs on a thread of its
  /// own; batches_made() counts them.
  explicit UnbatchedBuiltin(bool overlapped = false) : overlapped_(overlapped) {}

  const oracle::SutSpec& spec() const override { return spec_; }
  /// The builtin pipeline's preparation, with one step of the system's own (100 us).
  std::optional<oracle::PreparedCase> prepare(const ir::Module& annotated,
                                              const oracle::CaseOptions& options,
                                              oracle::CaseResult& r,
                                              const oracle::CaseReference* reference,
                                              const oracle::StageMark* mark) const override;
  bool prepares_in_process() const override { return true; }
  bool batches_programs() const override { return false; }
  std::optional<oracle::CaseOptions> fixed_case(const oracle::CaseOptions&) const override {
    return std::nullopt;
  }
  std::unique_ptr<oracle::PreparingBatch> preparing_batch() const override;
  std::shared_ptr<const oracle::SystemUnderTest> for_worker() const override {
    auto worker = std::make_shared<UnbatchedBuiltin>(overlapped_);
    worker->batches_ = batches_;
    return worker;
  }
  int batches_made() const { return *batches_; }
  std::optional<host::CompilerKind> default_compiler() const override {
    return host::CompilerKind::kGcc;
  }

 private:
  oracle::SutSpec spec_{"unbatched", "", ""};
  bool overlapped_;
  // Shared with the systems of its workers.
  std::shared_ptr<std::atomic<int>> batches_ = std::make_shared<std::atomic<int>>(0);
};

}  // namespace aotfuzz::test_support

// A stand-in system under test for tests of what a campaign does with a system's answers: the
// builtin pipeline, run like TVM's lane (each case its own program, gcc deciding its verdicts),
// with the choices a system makes for a campaign set by the test.
#pragma once

#include <memory>

#include "oracle/sut.h"

namespace aotfuzz::test_support {

class UnbatchedBuiltin final : public oracle::SystemUnderTest {
 public:
  /// `unpacked_share`: the share of a campaign's cases drawn with the unpacked API.
  explicit UnbatchedBuiltin(double unpacked_share = 0.5) : unpacked_share_(unpacked_share) {}

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
  std::shared_ptr<const oracle::SystemUnderTest> for_worker() const override {
    return std::make_shared<UnbatchedBuiltin>(unpacked_share_);
  }
  double unpacked_api_share() const override { return unpacked_share_; }
  std::optional<host::CompilerKind> default_compiler() const override {
    return host::CompilerKind::kGcc;
  }

 private:
  oracle::SutSpec spec_{"unbatched", "", ""};
  double unpacked_share_;
};

}  // namespace aotfuzz::test_support

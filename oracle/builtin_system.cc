// The builtin pipeline (aot/) as a system under test.
#include "oracle/case_flags.h"
#include "oracle/case_flow.h"
#include "oracle/sut.h"

namespace aotfuzz::oracle {
namespace {

class BuiltinSystem final : public SystemUnderTest {
 public:
  const SutSpec& spec() const override { return spec_; }

  std::optional<PreparedCase> prepare(const ir::Module& annotated, const CaseOptions& options,
                                      CaseResult& r, const CaseReference* reference,
                                      const StageMark* mark) const override {
    return prepare_builtin_case(annotated, options, r, reference, mark);
  }

  bool prepares_in_process() const override { return true; }
  bool batches_programs() const override { return true; }

  // The pipeline without the bugs the options inject: a finding of an injected bug must pass
  // there, as a finding of TVM must pass on its fixed build.
  std::optional<CaseOptions> fixed_case(const CaseOptions& options) const override {
    if (!options.aot.bugs.any()) return std::nullopt;
    CaseOptions fixed = options;
    fixed.aot.bugs = aot::BugSet();
    return fixed;
  }

  std::shared_ptr<const SystemUnderTest> for_worker() const override { return builtin_system(); }

  // The pipeline models TVM v0.8, which plans memory one way: no USMP, no pools, no options.
  std::optional<std::string> refuses(const CaseOptions& options) const override {
    if (options.memory.is_default()) return std::nullopt;
    std::string given;
    for (CaseFlag id :
         {CaseFlag::kUsmp, CaseFlag::kUsmpAlgorithm, CaseFlag::kPools, CaseFlag::kWorkspaceIo,
          CaseFlag::kWorkspaceAlignment, CaseFlag::kConstantAlignment, CaseFlag::kLinkParams}) {
      given += case_flag(id).print(options);
    }
    if (options.memory.debug_overlap) given += " --debug-fault usmp:overlap";
    return "the builtin pipeline models TVM v0.8's memory planning and takes none of" + given +
           " (they are TVM's from v0.9: --sut tvm)";
  }

 private:
  SutSpec spec_;
};

}  // namespace

const std::shared_ptr<const SystemUnderTest>& builtin_system() {
  // Stateless and immutable: one instance serves every case of the process.
  static const std::shared_ptr<const SystemUnderTest> builtin = std::make_shared<BuiltinSystem>();
  return builtin;
}

}  // namespace aotfuzz::oracle

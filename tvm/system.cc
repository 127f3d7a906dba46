// TVM as a system under test: one driver per system, a fresh one per campaign worker.
#include "tvm/system.h"

#include <filesystem>
#include <mutex>
#include <system_error>

#include "host/toolchain.h"
#include "tvm/case_flow.h"
#include "tvm/driver.h"

namespace aotfuzz::tvm {
namespace {

class TvmSystem final : public oracle::SystemUnderTest {
 public:
  TvmSystem(oracle::SutSpec spec, std::shared_ptr<const TvmSystem> fixed)
      : spec_(std::move(spec)), fixed_(std::move(fixed)) {
    TvmDriverOptions o;
    o.home = spec_.home;
    driver_ = std::make_shared<TvmDriver>(o);
  }

  const oracle::SutSpec& spec() const override { return spec_; }

  std::optional<oracle::PreparedCase> prepare(const ir::Module& annotated,
                                              const oracle::CaseOptions& options,
                                              oracle::CaseResult& r,
                                              const oracle::CaseReference* /*reference*/,
                                              const oracle::StageMark* /*mark*/) const override {
    auto prepared = prepare_tvm_case(annotated, options, r, *driver_);
    // TVM's own tests build its C with gcc, which decides every finding; tcc, 10 times faster
    // on it, builds the programs that pass (docs/tvm.md, "Speed").
    if (prepared && !options.compiler && !options.sanitize && !options.keep_files) {
      if (const auto& tcc = fast_compiler()) {
        prepared->confirm_compiler = prepared->compiler;
        prepared->compiler = tcc->kind;
        prepared->toolchain = *tcc;
      }
    }
    return prepared;
  }

  // TVM runs in its driver process, which contains its crashes and hangs.
  bool prepares_in_process() const override { return false; }
  // TVM's programs are built from TVM's files, one program per case.
  bool batches_programs() const override { return false; }

  std::optional<oracle::CaseOptions> fixed_case(const oracle::CaseOptions& options) const override {
    if (!fixed_) return std::nullopt;
    oracle::CaseOptions fixed = options;
    fixed.sut = fixed_;
    return fixed;
  }

  std::shared_ptr<const oracle::SystemUnderTest> for_worker() const override {
    return std::make_shared<TvmSystem>(spec_, fixed_);
  }

  std::optional<std::string> problem() const override {
    if (spec_.home.empty()) {
      return "--sut tvm needs --tvm-home DIR or AOTFUZZ_TVM_HOME (scripts/tvm/build.sh builds TVM "
             "and prints the directory)";
    }
    if (auto p = tvm_home_problem(spec_.home)) return p;
    if (fixed_) return fixed_->problem();
    return std::nullopt;
  }

  std::optional<std::string> refuses(const oracle::CaseOptions& options) const override {
    if (options.aot.bugs.any()) {
      return "--inject changes the builtin pipeline only; it has no meaning with --sut tvm";
    }
    return std::nullopt;
  }

  // Where TVM's defaults would mostly hit its known limits (docs/tvm.md, "What it finds in TVM").
  std::vector<std::pair<std::string, std::string>> generation_knobs() const override {
    return {
        // The ccompiler codegen compiles float32, float16, int32 and int64 (codegen_c.h,
        // GetDtypeString); int8 came in v0.16.0.
        {"dtypes", "float32:8,int32:1"},
        // Its kernels are CSOURCE_BINARY_OP_<rank>D macros it defines for rank 2 only: operands of
        // any other rank do not compile (compile-error:codegen).
        {"min_rank", "2"},
        {"max_rank", "2"},
        // A broadcasting add in a region indexes both inputs with the output's shape
        // (mismatch:codegen, output-unwritten:codegen).
        {"p_broadcast", "0.02"},
        // A constant bound into a region is C++-only NDArray code before v0.10.0
        // (sut-error:codegen:packed_func).
        {"p_constant", "0.03"},
        // A region output that is a nested tuple fails ICHECK(ttype) in the AoT executor codegen.
        {"p_nested_tuple", "0.05"},
    };
  }

  // With the unpacked API the AoT executor calls a ccompiler function directly, which the
  // codegen defines with the packed signature (docs/tvm.md): a case with a region ends there on
  // every release, so most cases are drawn packed.
  double unpacked_api_share() const override { return 0.1; }

  // TVM's own AoT tests build with gcc.
  std::optional<host::CompilerKind> default_compiler() const override {
    return host::CompilerKind::kGcc;
  }

 private:
  const std::optional<host::Toolchain>& fast_compiler() const {
    std::call_once(fast_once_, [this] { fast_ = host::find_toolchain(host::CompilerKind::kTcc); });
    return fast_;
  }

  oracle::SutSpec spec_;
  mutable std::once_flag fast_once_;
  mutable std::optional<host::Toolchain> fast_;
  std::shared_ptr<const TvmSystem> fixed_;
  // The driver's calls are serialized inside it; a const system still sends it requests.
  std::shared_ptr<TvmDriver> driver_;
};

}  // namespace

namespace {

// Replay lines must work from any directory.
std::string absolute_home(const std::string& home) {
  if (home.empty()) return home;
  std::error_code ec;
  const auto absolute = std::filesystem::absolute(home, ec);
  return ec ? home : absolute.lexically_normal().string();
}

}  // namespace

std::shared_ptr<const oracle::SystemUnderTest> make_tvm_system(oracle::SutSpec spec) {
  spec.home = absolute_home(spec.home.empty() ? tvm_home_from_env().value_or("") : spec.home);
  spec.fixed_home = absolute_home(spec.fixed_home);
  std::shared_ptr<const TvmSystem> fixed;
  if (!spec.fixed_home.empty()) {
    fixed = std::make_shared<TvmSystem>(oracle::SutSpec{spec.name, spec.fixed_home, ""}, nullptr);
  }
  return std::make_shared<TvmSystem>(std::move(spec), std::move(fixed));
}

}  // namespace aotfuzz::tvm

// TVM as a system under test: one driver per system, a fresh one per campaign worker.
#include "tvm/system.h"

#include <condition_variable>
#include <filesystem>
#include <future>
#include <mutex>
#include <system_error>

#include "host/toolchain.h"
#include "tvm/case_flow.h"
#include "tvm/driver.h"
#include "tvm/known.h"

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
    use_fast_compiler(prepared, options);
    return prepared;
  }

  std::unique_ptr<oracle::PreparingBatch> preparing_batch() const override;

  // TVM's own tests build its C with gcc, which decides every finding; tcc, 10 times faster
  // on it, builds the programs that pass (docs/tvm.md, "Speed").
  void use_fast_compiler(std::optional<oracle::PreparedCase>& prepared,
                         const oracle::CaseOptions& options) const {
    if (prepared && !options.compiler && !options.sanitize && !options.keep_files) {
      if (const auto& tcc = fast_compiler()) {
        prepared->confirm_compiler = prepared->compiler;
        prepared->compiler = tcc->kind;
        prepared->toolchain = *tcc;
      }
    }
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

  std::string identity() const override {
    if (problem()) return "";
    const std::string version = driver_->tvm_version();
    if (version.empty()) return "";  // it did not start: the cases will say why
    const std::string commit = driver_->tvm_commit();
    return "TVM " + version + (commit.empty() ? "" : ", commit " + commit) + ", at " + spec_.home;
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
    // Only a memory configuration beyond v0.8's asks the release what it has (which starts the
    // driver); a TVM that does not start says so in every case instead.
    if (options.memory.is_default() || problem() || driver_->tvm_version().empty()) {
      return std::nullopt;
    }
    const oracle::MemoryOptions& m = options.memory;
    const oracle::MemoryOptions defaults;
    const struct {
      bool asked;
      std::string_view feature, flag, since;
    } needs[] = {
        {m.usmp, "usmp", "--usmp on", "v0.9.0 (tir.usmp.enable)"},
        {m.pools == oracle::MemoryOptions::Pools::kExternal, "external_pools", "--pools external",
         "v0.9.0 (WorkspaceMemoryPools)"},
        {m.workspace_io, "workspace_io", "--workspace-io", "v0.9.0 (tir.usmp.use_workspace_io)"},
        {m.constant_alignment != defaults.constant_alignment, "constant_alignment",
         "--constant-alignment", "v0.9.0 (the executor's constant-byte-alignment)"},
        {!m.link_params, "link_params_off", "--no-link-params",
         "v0.9.0 (the executor's link-params)"},
        {m.debug_overlap, "usmp_plan", "--debug-fault usmp:overlap",
         "v0.10.0 (tir.usmp.custom_algorithm)"},
    };
    for (const auto& n : needs) {
      if (n.asked && !driver_->has_feature(n.feature)) {
        return "TVM " + driver_->tvm_version() + " at " + spec_.home + " has no " +
               std::string(n.flag) + ": it came in " + std::string(n.since);
      }
    }
    return std::nullopt;
  }

  // Where TVM's defaults would mostly hit its known limits (docs/tvm.md, "What it finds in TVM").
  std::vector<std::pair<std::string, std::string>> generation_knobs() const override {
    auto knobs = limit_knobs();
    for (auto& k : memory_knobs()) knobs.push_back(std::move(k));
    for (auto& k : codegen_knobs()) knobs.push_back(std::move(k));
    return knobs;
  }

  // On a release with UMA half the cases draw their graphs for the UMA backend alone, beyond the
  // ccompiler's limits (limit_knobs): any rank 1 to 4, int8, broadcasting, the three ops it
  // offloads, the unpacked API and the C interface as often as the generator's defaults. Its
  // constants stay scalars: a non-scalar constant inside a UMA region is a limit of UMA's default
  // lowering (docs/tvm.md); and no op takes one value twice (below). The other half keep the
  // limits and mix both codegens.
  std::vector<GenerationProfile> generation_profiles() const override {
    if (codegen_knobs().empty()) return {};
    return {
        {"mixed", 1, {}},
        {"uma",
         1,
         {{"targets", "aotfuzz_uma:3,default:1"},
          {"dtypes", "float32:6,int32:1,int8:1"},
          {"ops", "add:2,subtract:1,multiply:1"},
          {"min_rank", "1"},
          {"max_rank", "4"},
          {"p_broadcast", "0.2"},
          {"p_constant", "0.12"},
          {"p_scalar_constant", "1"},
          // TVM's simplifier cancels float x - x to 0 whatever x holds (NaN, infinities):
          // deliberate (rewrite_simplify.cc), and the inputs hold both.
          {"p_repeat_operand", "0"},
          {"p_unpacked", "0.5"}}},
    };
  }

  // The region targets: the ccompiler's C source everywhere, and where this release has UMA
  // (v0.10.0 on, built with USE_UMA ON) as many regions for the driver's aotfuzz_uma backend,
  // the other path of BYOC (a RelayToTIR hook lowering through TIR). A quarter of the regions
  // stay on the host, as the default policy leaves them.
  std::vector<std::pair<std::string, std::string>> codegen_knobs() const {
    if (problem() || driver_->tvm_version().empty() || !driver_->has_feature("uma")) return {};
    return {{"targets", "ccompiler:3,aotfuzz_uma:3,default:2"}};
  }

  // The memory configurations this release has, drawn per case; nothing where TVM does not start
  // (its cases say why).
  std::vector<std::pair<std::string, std::string>> memory_knobs() const {
    if (problem() || driver_->tvm_version().empty()) return {};
    std::vector<std::pair<std::string, std::string>> knobs;
    if (driver_->has_feature("usmp")) {
      // From v0.12.0 (PR #14107) USMP is on by default for the C runtime: what users build.
      const auto release = parse_release(driver_->tvm_version());
      knobs.emplace_back("p_usmp", release && *release >= Release{0, 12} ? "0.75" : "0.25");
      knobs.emplace_back("p_usmp_algorithm", "1");
    }
    if (driver_->has_feature("external_pools")) knobs.emplace_back("p_external_pools", "0.25");
    if (driver_->has_feature("workspace_io")) knobs.emplace_back("p_workspace_io", "0.5");
    knobs.emplace_back("p_workspace_alignment", "0.25");
    if (driver_->has_feature("constant_alignment")) {
      knobs.emplace_back("p_constant_alignment", "0.25");
    }
    if (driver_->has_feature("link_params_off")) knobs.emplace_back("p_no_link_params", "0.1");
    return knobs;
  }

  std::vector<std::pair<std::string, std::string>> limit_knobs() const {
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
        // A constant bound into a ccompiler region is C++-only NDArray code on every release
        // (sut-error:codegen:packed_func:type_code_-kTVMStr: the C runtime's refusal fails
        // building its own message).
        {"p_constant", "0.03"},
        // @main returning one value in two fields leaves the second output unwritten on every
        // release (output-unwritten:codegen, the AoT executor codegen's first-match lookup of
        // storage ids), which would otherwise share its signature with the next such bug.
        {"p_duplicate_output", "0.005"},
        // A region output that is a nested tuple fails ICHECK(ttype) in the AoT executor codegen.
        {"p_nested_tuple", "0.05"},
        // With the unpacked API the AoT executor calls a ccompiler function directly, which the
        // codegen defines with the packed signature (docs/tvm.md): a case with a region ends
        // there on every release, so most cases are drawn packed.
        {"p_unpacked", "0.1"},
    };
  }

  // TVM's own AoT tests build with gcc.
  std::string_view home_flag() const override { return "tvm-home"; }
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

// Cases whose graphs go to the driver in one request, built by TVM on another thread while the
// worker runs the cases before them. Verdicts are prepare's: the driver builds a batch's graphs
// one after the other as it builds single requests, and each case's steps before and after TVM
// are prepare_tvm_case's own.
class TvmPreparingBatch final : public oracle::PreparingBatch {
 public:
  // `system` outlives its batches (a campaign worker holds both).
  TvmPreparingBatch(const TvmSystem& system, std::shared_ptr<TvmDriver> driver)
      : system_(system), driver_(std::move(driver)) {}

  ~TvmPreparingBatch() override {
    if (builds_.valid()) builds_.wait();
  }

  std::size_t add(const ir::Module& annotated, const oracle::CaseOptions& options,
                  oracle::CaseResult& r) override {
    Entry e{options, begin_tvm_case(annotated, options, r), requests_.size()};
    if (e.start) requests_.push_back(e.start->request);
    entries_.push_back(std::move(e));
    return entries_.size() - 1;
  }

  void submit() override {
    if (requests_.empty()) return;
    answers_ = std::make_shared<Answers>();
    answers_->builds.resize(requests_.size());
    builds_ = std::async(std::launch::async, [driver = driver_, requests = std::move(requests_),
                                              answers = answers_] {
      try {
        driver->build_batch(requests, [&](std::size_t i, const TvmBuild& b) {
          std::lock_guard lock(answers->mutex);
          answers->builds[i] = b;
          answers->changed.notify_all();
        });
      } catch (const std::exception& e) {
        // This process, not TVM (out of memory): no verdict of TVM's.
        answers->fail(std::string("the TVM driver's client failed: ") + e.what());
      }
    });
  }

  void wait(std::size_t i) override {
    const Entry& e = entries_.at(i);
    if (!e.start) return;
    std::unique_lock lock(answers_->mutex);
    answers_->changed.wait(lock, [&] { return answers_->builds.at(e.request).has_value(); });
  }

  std::optional<oracle::PreparedCase> finish(std::size_t i, oracle::CaseResult& r) override {
    const Entry& e = entries_.at(i);
    if (!e.start) return std::nullopt;
    wait(i);
    TvmBuild built;
    {
      std::lock_guard lock(answers_->mutex);
      built = std::move(*answers_->builds[e.request]);
    }
    auto prepared = finish_tvm_case(*e.start, built, e.options, r, *driver_);
    system_.use_fast_compiler(prepared, e.options);
    return prepared;
  }

 private:
  struct Entry {
    oracle::CaseOptions options;
    std::optional<TvmCaseStart> start;  // nullopt: settled before TVM
    std::size_t request = 0;            // its index among requests_
  };
  const TvmSystem& system_;
  std::shared_ptr<TvmDriver> driver_;
  std::vector<Entry> entries_;
  std::vector<nlohmann::json> requests_;
  // The driver's answers as they come, from the thread that waits for them.
  struct Answers {
    std::mutex mutex;
    std::condition_variable changed;
    std::vector<std::optional<TvmBuild>> builds;

    void fail(const std::string& why) {
      std::lock_guard lock(mutex);
      for (auto& b : builds) {
        if (b) continue;
        b.emplace();
        b->status = TvmBuild::Status::kUnavailable;
        b->message = why;
      }
      changed.notify_all();
    }
  };
  std::shared_ptr<Answers> answers_;
  std::future<void> builds_;
};

std::unique_ptr<oracle::PreparingBatch> TvmSystem::preparing_batch() const {
  return std::make_unique<TvmPreparingBatch>(*this, driver_);
}

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

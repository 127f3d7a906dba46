// The pipeline driver (docs/design.md, "The pipeline driver"): runs the passes of aot/passes.def in
// order on an annotated module, each output verified, and calls an observer after each pass. It
// owns the list of stages that verdicts, stage localisation and `aotfuzz compile --emit` name, so
// a new pass is one row of passes.def plus its file.
#pragma once

#include <functional>
#include <optional>
#include <string_view>
#include <vector>

#include "aot/options.h"
#include "aot/pass_error.h"
#include "ir/module.h"

namespace aotfuzz::aot {

/// The stages of a case, in order: the annotated input, the output of each pass of passes.def,
/// the emitted C, and the run of the compiled program. A verdict is attributed to the first stage
/// that diverged.
enum class Stage : unsigned {
  kAnnotated,
#define AOTFUZZ_PASS(id, name, stage, function, enabled, description) id,
#include "aot/passes.def"
#undef AOTFUZZ_PASS
  kCodegen,
  kRun,
};
inline constexpr int kNumStages = static_cast<int>(Stage::kRun) + 1;
/// The stages that hold a module: the annotated input and one per pass.
inline constexpr int kNumModuleStages = static_cast<int>(Stage::kCodegen);

/// A stage's name in verdicts and signatures: "annotated", the pass's CLI name ("merge", ...),
/// "codegen", "run".
std::string_view stage_name(Stage stage);
std::optional<Stage> parse_stage(std::string_view name);

/// A pass: module in, module out. Verifies its input when options.verify_input (throws
/// ir::VerifyError on invalid input) and throws PassError when it cannot handle the input or
/// (with injected bugs) breaks it.
using PassFn = ir::Module (*)(const ir::Module&, const Options&);
/// Whether a pass runs under these options.
using PassEnabledFn = bool (*)(const Options&);

/// A row of the pass table.
struct PassInfo {
  /// The stage the pass's output is.
  Stage stage;
  /// The CLI name, also the stage's name in verdicts ("merge").
  std::string_view name;
  /// The name of the module it outputs, for `compile --emit` ("merged").
  std::string_view module_name;
  PassFn run;
  PassEnabledFn enabled;
  std::string_view description;
};

/// Every pass, in pipeline order.
const std::vector<PassInfo>& pass_table();
/// The row whose CLI name is `name`, or nullptr.
const PassInfo* find_pass(std::string_view name);

/// Sets options.debug_fault from "PASS:crash", "PASS:hang" or "PASS:overflow" (PASS a row of the
/// pass table); false, leaving `options` as it was, for anything else.
bool parse_debug_fault(std::string_view spec, Options& options);
/// The inverse: "PASS:crash", "PASS:hang" or "PASS:overflow"; empty without a debug fault.
std::string debug_fault_spec(const Options& options);

/// The names of the module stages for `compile --emit`, in order: "annotated", then each pass's
/// module name ("merged", "partitioned", "fused").
const std::vector<std::string_view>& module_stage_names();

/// The module of every module stage. A disabled pass's stage repeats its input; after a failure
/// every later stage repeats the last module reached.
class Stages {
 public:
  Stages() = default;
  /// Every stage holds `annotated`.
  explicit Stages(const ir::Module& annotated);

  const ir::Module& at(Stage stage) const;
  const ir::Module& annotated() const { return at(Stage::kAnnotated); }
  /// The output of the last pass: what code generation takes.
  const ir::Module& output() const;
  /// The stage whose module name (module_stage_names()) is `name`, or nullptr.
  const ir::Module* find(std::string_view name) const;
  /// Sets `stage` and every later one to `module`.
  void set(Stage stage, const ir::Module& module);

  /// The pass that threw, when one did.
  std::optional<Stage> failed;

 private:
  std::vector<ir::Module> modules_;
};

/// Called after each pass that ran, with its row and its verified output; returning false stops
/// the pipeline there.
using PassObserver = std::function<bool(const PassInfo&, const ir::Module&)>;

/// Runs the enabled passes of the table on `annotated` (verified first when
/// options.verify_input; each pass verifies its own output), filling `stages` as it goes and
/// calling `observer` after each pass. Exceptions of a pass propagate with stages.failed set: see
/// run_passes.
void run_pipeline(const ir::Module& annotated, const Options& options, Stages& stages,
                  const PassObserver& observer = nullptr);

/// run_pipeline without an observer. Throws ir::VerifyError (naming the offending node) when the
/// input is invalid, PassError(kRejectedInput) when a pass refuses it, and
/// PassError(kBrokenOutput) when a pass's output fails ir::verify() or a pass builds an ill-typed
/// node (possible only with injected bugs).
Stages run_passes(const ir::Module& annotated, const Options& options = {});

}  // namespace aotfuzz::aot

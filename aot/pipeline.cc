// The pass table and the pipeline driver.
#include "aot/pipeline.h"

#include <csignal>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "aot/fuse_ops.h"
#include "aot/merge_compiler_regions.h"
#include "aot/partition_graph.h"
#ifdef AOTFUZZ_TEST_NOOP_PASS
#include "aot/noop_pass.h"
#endif
#include "ir/verify.h"

namespace aotfuzz::aot {
namespace {

bool merge_enabled(const Options& options) { return options.merge; }
bool always_enabled(const Options&) { return true; }

std::vector<std::string_view> make_stage_names() {
  std::vector<std::string_view> names = {"annotated"};
  for (const auto& row : pass_table()) names.push_back(row.name);
  names.push_back("codegen");
  names.push_back("run");
  return names;
}

const std::vector<std::string_view>& stage_names() {
  static const std::vector<std::string_view> kNames = make_stage_names();
  return kNames;
}

}  // namespace

const std::vector<PassInfo>& pass_table() {
  static const std::vector<PassInfo> kTable = {
#define AOTFUZZ_PASS(id, name, stage, function, enabled, description) \
  {Stage::id, name, stage, &function, &enabled, description},
#include "aot/passes.def"
#undef AOTFUZZ_PASS
  };
  return kTable;
}

const PassInfo* find_pass(std::string_view name) {
  for (const auto& row : pass_table()) {
    if (row.name == name) return &row;
  }
  return nullptr;
}

std::string_view stage_name(Stage stage) {
  return stage_names().at(static_cast<std::size_t>(stage));
}

std::optional<Stage> parse_stage(std::string_view name) {
  const auto& names = stage_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return static_cast<Stage>(i);
  }
  return std::nullopt;
}

const std::vector<std::string_view>& module_stage_names() {
  static const std::vector<std::string_view> kNames = [] {
    std::vector<std::string_view> names = {"annotated"};
    for (const auto& row : pass_table()) names.push_back(row.module_name);
    return names;
  }();
  return kNames;
}

Stages::Stages(const ir::Module& annotated) : modules_(kNumModuleStages, annotated) {}

const ir::Module& Stages::at(Stage stage) const {
  return modules_.at(static_cast<std::size_t>(stage));
}

const ir::Module& Stages::output() const { return modules_.at(kNumModuleStages - 1); }

const ir::Module* Stages::find(std::string_view name) const {
  const auto& names = module_stage_names();
  for (std::size_t i = 0; i < names.size(); ++i) {
    if (names[i] == name) return &modules_.at(i);
  }
  return nullptr;
}

void Stages::set(Stage stage, const ir::Module& module) {
  for (auto i = static_cast<std::size_t>(stage); i < modules_.size(); ++i) modules_[i] = module;
}

namespace {

// Options::debug_fault: a real SIGSEGV; an exception that is no PassError; two words written past the end of a heap block, which
// breaks a neighbouring block (the effect of an out-of-bounds write in a pass, which shows later
// or never); or a loop that only a time limit ends.
void debug_fault(Options::DebugFault fault) {
  if (fault == Options::DebugFault::kCrash) std::raise(SIGSEGV);
  if (fault == Options::DebugFault::kThrow) throw std::logic_error("debug fault: internal error");
  if (fault == Options::DebugFault::kOverflow) {
    // Through a volatile pointer to volatile words: the compiler neither sees the bound nor
    // drops the writes (nor the block).
    auto* block = new std::uint64_t[4];
    volatile std::uint64_t* volatile past = block;
    past[4] = 0x5afe5afe5afe5afeULL;
    past[5] = 0x5afe5afe5afe5afeULL;
    delete[] block;
    return;
  }
  volatile std::uint64_t spins = 0;
  for (;;) spins = spins + 1;
}

}  // namespace

void run_pipeline(const ir::Module& annotated, const Options& options, Stages& stages,
                  const PassObserver& observer) {
  stages = Stages(annotated);
  if (options.verify_input) ir::verify(annotated);
  // Each module is verified once, as the output of its pass.
  Options inner = options;
  inner.verify_input = false;
  const ir::Module* previous = &annotated;
  for (const auto& row : pass_table()) {
    if (!row.enabled(options)) continue;
    if (options.debug_fault != Options::DebugFault::kNone && row.name == options.debug_fault_pass) {
      debug_fault(options.debug_fault);
    }
    ir::Module out;
    try {
      out = row.run(*previous, inner);
    } catch (...) {
      stages.failed = row.stage;
      throw;
    }
    stages.set(row.stage, out);
    previous = &stages.at(row.stage);
    if (observer && !observer(row, *previous)) return;
  }
}

bool parse_debug_fault(std::string_view spec, Options& options) {
  const auto colon = spec.rfind(':');
  if (colon == std::string_view::npos || find_pass(spec.substr(0, colon)) == nullptr) return false;
  const std::string_view what = spec.substr(colon + 1);
  if (what == "crash") {
    options.debug_fault = Options::DebugFault::kCrash;
  } else if (what == "hang") {
    options.debug_fault = Options::DebugFault::kHang;
  } else if (what == "overflow") {
    options.debug_fault = Options::DebugFault::kOverflow;
  } else if (what == "throw") {
    options.debug_fault = Options::DebugFault::kThrow;
  } else {
    return false;
  }
  options.debug_fault_pass = std::string(spec.substr(0, colon));
  return true;
}

std::string debug_fault_spec(const Options& options) {
  switch (options.debug_fault) {
    case Options::DebugFault::kNone:
      return "";
    case Options::DebugFault::kCrash:
      return options.debug_fault_pass + ":crash";
    case Options::DebugFault::kHang:
      return options.debug_fault_pass + ":hang";
    case Options::DebugFault::kOverflow:
      return options.debug_fault_pass + ":overflow";
    case Options::DebugFault::kThrow:
      return options.debug_fault_pass + ":throw";
  }
  return "";
}

Stages run_passes(const ir::Module& annotated, const Options& options) {
  Stages stages;
  run_pipeline(annotated, options, stages);
  return stages;
}

}  // namespace aotfuzz::aot

// The types of a case: the options that select how it is compiled and judged, and its result.
// The entry point that runs one (run_case) is oracle/oracle.h.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "aot/codegen.h"
#include "aot/pipeline.h"
#include "host/process.h"
#include "host/toolchain.h"
#include "oracle/verdict.h"
#include "reference/footprint.h"
#include "reference/value.h"

namespace aotfuzz::oracle {

class SystemUnderTest;

/// The AoT executor's memory configuration as TVM v0.9 on offers it: the Unified Static Memory
/// Planner (USMP), memory pools, alignment, linked parameters. The builtin pipeline models v0.8,
/// which has none of it, and refuses anything but the defaults; a TVM release refuses what it
/// lacks (SystemUnderTest::refuses). The defaults are what the TVM lane built before these
/// options existed: USMP off, internal pools, workspace aligned to 8, parameters linked.
struct MemoryOptions {
  enum class Pools {
    kInternal,  ///< TVM places its pools in the generated C
    kExternal,  ///< WorkspaceMemoryPools/ConstantMemoryPools: the application allocates them
  };
  /// tir.usmp.enable
  bool usmp = false;
  /// tir.usmp.algorithm (with usmp): greedy_by_size (TVM's default), greedy_by_conflicts or
  /// hill_climb.
  std::string usmp_algorithm = "greedy_by_size";
  /// Where the pools live (with usmp).
  Pools pools = Pools::kInternal;
  /// tir.usmp.use_workspace_io (with usmp and the C interface): inputs and outputs live in the
  /// workspace pool, reached through map_inputs/map_outputs.
  bool workspace_io = false;
  /// The executor's workspace-byte-alignment and constant-byte-alignment.
  int workspace_alignment = 8;
  int constant_alignment = 16;
  /// The executor's link-params.
  bool link_params = true;
  /// A testing aid (--debug-fault usmp:overlap): the driver's recording planner places two
  /// conflicting buffers at one offset, so the pool-plan oracle must see an overlap.
  bool debug_overlap = false;

  bool operator==(const MemoryOptions&) const = default;
  bool is_default() const { return *this == MemoryOptions{}; }
};

/// Everything that selects how one case is compiled and judged.
struct CaseOptions {
  /// The pipeline's and the code generator's switches (merge, mod_name, injected bugs, api,
  /// interface, storage reuse, ...).
  aot::Options aot;
  /// The AoT executor's memory configuration (TVM only).
  MemoryOptions memory;
  /// The target C compiler; nullopt picks tcc, else gcc, else clang.
  std::optional<host::CompilerKind> compiler;
  /// The compiler already looked up (campaigns resolve it once: a lookup runs `cc -v`).
  std::optional<host::Toolchain> toolchain;
  /// Build the test program with -fsanitize=address,undefined (gcc/clang only).
  bool sanitize = false;
  /// Seed of the input tensors (reference::make_inputs).
  std::uint64_t input_seed = 1;
  /// Largest tolerated float difference in ulps (0: bitwise, NaNs equal).
  std::uint32_t max_ulp = 0;
  /// Bytes of tensors a case may need (reference::tensor_bytes_needed); a graph over it is
  /// invalid input, refused before anything is allocated. 0: no budget.
  std::uint64_t memory_budget = reference::kDefaultMemoryBudget;
  /// Limits of the test program's run.
  host::RunLimits limits;
  /// Skip compiling and running (stages and static checks only).
  bool in_process_only = false;
  /// Check every pass's module against TVM v0.8's rules (oracle/structure.h; CLI
  /// --no-structure turns it off).
  bool check_structure = true;
  /// A behaviour the system under test lists as known for its release (tvm/known.def), seen
  /// with nothing else wrong, gives the verdict `known` instead of what it is (CLI --no-known).
  bool see_past_known = true;
  /// Generate the C a second time from a copy of the fused module with fresh nodes and require
  /// the same bytes (the determinism oracle; CLI --no-determinism turns it off).
  bool check_determinism = true;
  /// The warnings oracle (PreparedCase::check_warnings): off here, on in `aotfuzz run` and
  /// replay lines (CLI --no-warnings turns it off), one case in 512 in campaigns.
  bool check_warnings = false;
  /// Keep the temporary directory (its path is in CaseResult::work_dir).
  bool keep_files = false;
  /// run_case probes the in-process steps in a child process first (oracle/in_process_probe.h),
  /// so that a crash or hang of a pass is a verdict rather than the end of this process. The
  /// command line sets it; libFuzzer targets leave it off (a crash there is the finding).
  bool isolate_in_process = false;
  /// Wall-clock time the in-process steps of one case may take (they take milliseconds).
  std::chrono::milliseconds in_process_budget{10'000};
  /// What compiles the graph (oracle/sut.h); null: the builtin pipeline. Copies of the options
  /// share the system, whose calls are serialized; a campaign's workers each have their own.
  std::shared_ptr<const SystemUnderTest> sut;
};

/// The verdict and everything a finding bundle or a report needs.
struct CaseResult {
  Verdict verdict;
  /// Stage modules that were computed (annotated at least, when the input verified).
  std::optional<aot::Stages> stages;
  /// The emitted sources, harness included as "main.c", when codegen ran.
  std::vector<std::pair<std::string, std::string>> files;
  std::vector<reference::Value> inputs;
  /// The reference result on the original graph, flattened.
  std::vector<reference::Value> expected;
  /// What the compiled program produced, flattened (empty if it did not get that far).
  std::vector<reference::Value> actual;
  std::string work_dir;
  std::chrono::microseconds pipeline_time{0}, compile_time{0}, run_time{0};
  /// The part of pipeline_time spent on C code, the harness and static checks.
  std::chrono::microseconds codegen_time{0};
  /// The system under test's own steps within pipeline_time, as it measured them (TVM:
  /// partitioning, relay.build, the export); empty for the builtin pipeline.
  std::vector<std::pair<std::string, std::chrono::microseconds>> system_steps;
};

}  // namespace aotfuzz::oracle

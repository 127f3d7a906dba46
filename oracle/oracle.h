// One differential test case end to end: reference on the original graph, the pipeline stage by
// stage (interpreted after each pass), C codegen, static arity, compile, out-of-process run,
// dynamic arity, output comparison. The result is one verdict with its stage.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "aot/codegen.h"
#include "aot/pipeline.h"
#include "ir/module.h"
#include "oracle/process.h"
#include "oracle/sut.h"
#include "oracle/toolchain.h"
#include "oracle/verdict.h"
#include "reference/footprint.h"
#include "reference/value.h"

namespace aotfuzz::oracle {

/// Everything that selects how one case is compiled and judged.
struct CaseOptions {
  /// The pipeline's and the code generator's switches (merge, mod_name, injected bugs, api,
  /// interface, storage reuse, ...).
  aot::Options aot;
  /// The target C compiler; nullopt picks tcc, else gcc, else clang.
  std::optional<CompilerKind> compiler;
  /// The compiler already looked up (campaigns resolve it once: a lookup runs `cc -v`).
  std::optional<Toolchain> toolchain;
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
  RunLimits limits;
  /// Skip compiling and running (stages and static checks only).
  bool in_process_only = false;
  /// Check every pass's module against TVM v0.8's rules (oracle/structure.h; CLI
  /// --no-structure turns it off).
  bool check_structure = true;
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
  /// What compiles the graph: the builtin pipeline, or TVM (the builtin pipeline then gives the
  /// expectations: the reference, the partitioned module, the kernels' arities).
  Sut sut;
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
};

/// Runs one case. Never throws for anything the input or the pipeline does: every outcome is
/// a verdict (internal failures of the harness itself become toolchain-error).
CaseResult run_case(const ir::Module& annotated, const CaseOptions& options);

/// The same case on a system without the bug: the builtin pipeline without injected bugs, or the
/// fixed TVM (Sut::tvm_home_fixed); nullopt when there is none to compare with.
std::optional<CaseOptions> fixed_options(const CaseOptions& options);

/// `word` as one POSIX shell word: unchanged when it holds only characters no shell treats
/// specially, else single-quoted.
std::string shell_quote(std::string_view word);
// A file path as a word of a replay line: quoted, and kept from reading as an option.
std::string shell_quote_path(std::string_view path);

/// The flags that reproduce `options` on the command line (`--no-merge --api unpacked ...`).
std::string replay_flags(const CaseOptions& options);

}  // namespace aotfuzz::oracle

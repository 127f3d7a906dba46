// The test-harness C program (main.c) that runs a generated model under guard and reports what
// it did on stdout, and the parser of that report.
//
// Report lines (one per line, in this order):
//   AOTFUZZ run <k>                          before run k (k = 1, 2)
//   <name> <num_args>                        call trace (runtime header's AOTFUZZ_TRACE_CALL)
//   AOTFUZZ rc <n>                           after each run: the entry point's return code
//   AOTFUZZ output-unwritten <j> <element>   output j element differs between the two runs
//   AOTFUZZ output <j> <hex>                 output j's bytes after run 1, lowercase hex
//   AOTFUZZ done                             the harness finished
// and on a fault, instead of the rest:
//   AOTFUZZ input-clobbered <i> <element>    a write into read-only input i (exit status 86)
//   AOTFUZZ out-of-bounds input|output <i>   an access to the guard page after buffer i (then
//                                            the default SIGSEGV action); also workspace 0 and
//                                            pool <k> (a foreign harness's memory pool k)
//   AOTFUZZ harness-error <what>             the harness could not set up (exit status 87)
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "aot/c_writer.h"
#include "aot/codegen.h"
#include "ir/error.h"
#include "ir/module.h"
#include "reference/value.h"

namespace aotfuzz::oracle {

/// Exit status of a harness that caught a write into an input.
inline constexpr int kInputClobberedExit = 86;
/// Exit status of a harness that could not set itself up.
inline constexpr int kHarnessErrorExit = 87;

/// The harness cannot be built for these inputs (count or types differ from @main), or a report
/// cannot be turned into values.
class HarnessError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// The C source of main.c for `module`'s @main (only its signature is used: the fused module, or
/// any module whose @main has the same parameters, names included, since the c interface's
/// struct fields are named after them) compiled with `options` (mod_name, interface; the packed
/// interface passes DLTensor handles, the c interface fills the structs of tvmgen_<mod>.h).
/// `inputs` has one value per parameter of @main (tuples are flattened). The program:
///  - places every input in its own page-aligned mapping, made read-only after filling, with a
///    PROT_NONE guard page after it; a SIGSEGV/SIGBUS handler reports writes into inputs;
///  - places every output at the end of its mapping, right before a PROT_NONE guard page;
///  - runs the model twice, outputs pre-filled with 0xA5 bytes then 0x5A bytes, and reports the
///    first element of each output that differs between the runs (never written);
///  - prints run 1's outputs and both return codes.
/// With -DAOTFUZZ_TRACE the runtime header's call trace goes to stdout. Compiles under tcc, gcc
/// and clang with -std=c99 -Wall -Wextra -Werror. Throws HarnessError on mismatched inputs.
std::string harness_c(const ir::Module& module, const aot::Options& options,
                      const std::vector<reference::Value>& inputs);

/// Every file-scope name of harness_case_c starts with this, so a batch keeps its cases apart by
/// prefixing them (as it does the `tvmgen_` names).
inline constexpr std::string_view kCasePrefix = "aotfuzz_case_";

/// The parts of harness_c, for programs that hold several cases: the runtime (system includes,
/// `#include "aotfuzz_runtime.h"`, the trace stream, and `static int aotfuzz_harness_run(const
/// struct aotfuzz_harness_case*, const uint8_t* const* input_data)`, which does everything listed
/// above for one case, with the given inputs or, for NULL, the case's own) once, then per
/// case the module's sources, its header, and harness_case_c (its inputs, output sizes and call of
/// the entry point, ending in `static const struct aotfuzz_harness_case aotfuzz_case_entry`).
/// harness_c is the runtime, the module header, one case and `main` running it.
std::string harness_runtime_c();
/// The runtime apart from the cases, for a runner that compiles it once per process and
/// compiles each batch of cases against it: harness_runtime_c and `int
/// <harness_shared_entry>(const struct aotfuzz_harness_case*, const uint8_t* const*)`, which runs
/// aotfuzz_harness_run. harness_runtime_symbols names what the cases take from outside: the
/// runtime's symbols and the C library functions harness_case_prelude_c declares.
std::string harness_shared_runtime_c();
std::vector<std::string> harness_runtime_symbols();
std::string_view harness_shared_entry();
/// What a program of cases needs above them when the runtime is compiled apart: the C library's
/// declarations the runtime header and the generated C use (no system header is read, which is
/// most of a small program's compile), aotfuzz_runtime.h without its includes, struct
/// aotfuzz_harness_case and the shared entry's prototype.
std::string harness_case_prelude_c();
/// main.c of a single program from its case part: the runtime, `#include "<header_name>"`, the
/// case and `int main(void)`.
std::string harness_main_c(const std::string& mod_name, const std::string& header_name,
                           const std::string& case_part);
std::string harness_case_c(const ir::Module& module, const aot::Options& options,
                           const std::vector<reference::Value>& inputs);

/// One flattened input of a case: its tensor type (as text, for a comment) and bytes.
struct HarnessInput {
  std::string type;
  std::string bytes;
};
/// @main's inputs flattened (tuples into their fields). Throws HarnessError when they do not
/// match @main's parameters.
std::vector<HarnessInput> harness_inputs(const ir::Module& module,
                                         const std::vector<reference::Value>& inputs);
/// harness_case_c in two parts: the inputs' bytes as C arrays and the table
/// `aotfuzz_case_input_data` of them, then the rest. A batch leaves the bytes out of its C
/// (harness_inputs_stub_c: a table of NULLs) and hands them to the cases at run time.
std::string harness_inputs_c(const std::vector<HarnessInput>& inputs);
std::string harness_inputs_stub_c(std::size_t num_inputs);
/// `call`, when given, writes the body of `static int32_t aotfuzz_case_run_once(uint8_t* const*
/// input_buf, uint8_t* const* output_buf)` instead of the interface's own call of the entry
/// point: a foreign system whose entry point's parameters depend on its build (TVM's external
/// memory pools, tvm/harness.h) calls it as its header declares. It may use the case's tables
/// (aotfuzz_case_input_size, _output_size) and must return the entry point's return code.
using CallWriter = std::function<void(aot::CWriter&)>;
std::string harness_code_c(const ir::Module& module, const aot::Options& options,
                           const std::vector<HarnessInput>& inputs, const CallWriter& call = {});

/// The harness of a program around another system's generated C (TVM's, tvm/harness.h), in two
/// files: the part every case shares (foreign_harness_support_c), which a worker compiles once,
/// and the case's main.c (foreign_harness_case_c). No call trace: such C has none.
///
/// The shared part: `title` (a comment line), the prologue, `headers` (that system's runtime
/// headers), `platform` (the platform layer it leaves to the application), the same runtime and
/// checks as the builtin pipeline's programs, their entry point for a case, and
/// `uint8_t* aotfuzz_harness_pool(int k, size_t size, size_t alignment)`
/// (oracle/c/harness_pools.c), memory pool k of a case (k < 8) before its guard page, filled with
/// 0xCD.
std::string foreign_harness_support_c(const std::string& title, const std::string& headers,
                                      const std::string& platform);
/// main.c: `title`, the C library headers the case code uses, `headers` (what the case code uses
/// of that system's headers), `run_declaration` (what declares the entry point the case calls),
/// the case and `int main(void)`, which runs it through the shared part.
std::string foreign_harness_case_c(const std::string& title, const std::string& headers,
                                   const std::string& run_declaration,
                                   const std::string& case_part);

/// One traced call.
struct TraceCall {
  std::string callee;
  int num_args = 0;
  friend bool operator==(const TraceCall&, const TraceCall&) = default;
};

/// One fault run: call `fail_at` (1-based, counted over the functions the executor called in
/// run 1) was made to fail; the entry point returned `rc`, and `calls_after` calls followed it.
struct FaultRun {
  int fail_at = 0;
  int rc = 0;
  int calls_after = 0;
  friend bool operator==(const FaultRun&, const FaultRun&) = default;
};

/// What a harness run reported.
struct ParsedRun {
  /// Return code of each run that finished, in order.
  std::vector<int> rcs;
  /// Output bytes (after run 1) by output index; an output that was not printed is empty and
  /// absent from `printed`.
  std::vector<std::vector<std::uint8_t>> outputs;
  std::vector<bool> printed;
  /// (output index, first element not written), one per affected output.
  std::vector<std::pair<int, std::int64_t>> unwritten;
  /// (input index, element) of a write into an input.
  std::optional<std::pair<int, std::int64_t>> clobbered_input;
  /// The fault runs after runs 1 and 2 (builtin programs with AOTFUZZ_TRACE only).
  std::vector<FaultRun> faults;
  /// (kernel, argument index) of the first argument a kernel's checks refused.
  std::optional<std::pair<std::string, int>> arg_error;
  /// ("input", "output", "workspace" or "pool", buffer index) of a guard-page fault.
  std::optional<std::pair<std::string, int>> out_of_bounds;
  /// The call trace of each run that started (runs[0] is run 1).
  std::vector<std::vector<TraceCall>> traces;
  /// The harness itself failed (mmap, mprotect, sigaction, malloc): "AOTFUZZ harness-error
  /// <what>", exit status 87. Not a finding.
  std::optional<std::string> harness_error;
  /// Whether "AOTFUZZ done" was seen (false after a crash or a kill).
  bool completed = false;
  /// Lines that were neither report nor trace lines (kept for diagnostics).
  std::vector<std::string> other_lines;

  /// The first run's return code, if it finished.
  std::optional<int> rc() const {
    return rcs.empty() ? std::nullopt : std::optional<int>(rcs.front());
  }
};

/// Parses a harness's stdout. Never throws: unreadable lines land in `other_lines`, and a
/// truncated report (a crash) simply lacks the later fields.
ParsedRun parse_harness_output(std::string_view stdout_text);

/// The printed outputs as tensors of @main's flattened result types. Throws HarnessError when an
/// output is missing or has the wrong byte count.
std::vector<reference::Value> output_values(const ParsedRun& run, const ir::Function& main);

}  // namespace aotfuzz::oracle

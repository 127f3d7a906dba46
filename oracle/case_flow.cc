// prepare_case and judge_case: the verdict logic of a compiled case, whatever executed it.
#include "oracle/case_flow.h"

#include <atomic>

#include "aot/codegen_error.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "oracle/harness.h"
#include "oracle/module_diff.h"
#include "oracle/static_arity.h"
#include "oracle/sut.h"
#include "oracle/workspace.h"
#include "reference/c_interface.h"
#include "reference/footprint.h"
#include "reference/tvm_passes.h"

namespace aotfuzz::oracle {
namespace {

using Clock = std::chrono::steady_clock;


std::chrono::microseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
}

Verdict judge_run(const ir::Module& annotated, const CaseOptions& options,
                  const PreparedCase& c, const RawResult& raw, CaseResult& r) {
  const host::RunResult& run = raw.run;
  host::RunLimits limits = c.limits;
  ParsedRun printed;
  if (!raw.report) printed = parse_harness_output(run.stdout_text);
  const ParsedRun& parsed = raw.report ? *raw.report : printed;
  if (run.kind == host::ExitKind::kExited && run.exit_code == kInputClobberedExit &&
      parsed.clobbered_input) {
    return {Stage::kRun,
            InputClobbered{parsed.clobbered_input->first, parsed.clobbered_input->second, "", ""}};
  }
  if (run.kind == host::ExitKind::kExited && run.exit_code == kHarnessErrorExit) {
    return {Stage::kRun,
            ToolchainError{"harness: " + parsed.harness_error.value_or(run.describe())}};
  }
  // Dynamic arity: every traced call against what its callee takes.
  for (const auto& trace : parsed.traces) {
    for (const auto& call : trace) {
      auto it = c.expected_args.find(call.callee);
      if (it != c.expected_args.end() && it->second != call.num_args) {
        return {Stage::kRun, Arity{call.callee, callee_kind_of(call.callee, c.mod_name), it->second,
                                   call.num_args, ArityEvidence::kDynamic}};
      }
    }
  }
  if (auto v = verdict_from_run(run, limits)) {
    if (auto* crash = std::get_if<Crash>(&v->detail)) {
      if (!parsed.traces.empty() && !parsed.traces.back().empty()) {
        crash->callee = parsed.traces.back().back().callee;
        crash->callee_kind = callee_kind_of(crash->callee, c.mod_name);
      }
      if (parsed.out_of_bounds) {
        crash->stderr_tail = "write past the end of " + parsed.out_of_bounds->first + " " +
                             std::to_string(parsed.out_of_bounds->second) + "\n" +
                             crash->stderr_tail;
      }
    }
    return *v;
  }
  if (!parsed.completed || run.exit_code != 0) {
    return {Stage::kRun, Crash{0, std::nullopt, "", "test program exited with " + run.describe()}};
  }
  if (parsed.rc() && *parsed.rc() != 0) {
    std::string why;
    if (parsed.arg_error) {
      why = " (kernel " + parsed.arg_error->first + " refused argument " +
            std::to_string(parsed.arg_error->second) + ": its DLTensor disagrees with the " +
            "kernel's parameter)";
    }
    return {Stage::kRun, PipelineError{aot::mangled_module_name(c.mod_name) + "_run returned " +
                                       std::to_string(*parsed.rc()) + why}};
  }
  if (!parsed.unwritten.empty()) {
    return {Stage::kCodegen,
            OutputUnwritten{parsed.unwritten.front().first, parsed.unwritten.front().second}};
  }
  r.actual = output_values(parsed, annotated.main());
  if (auto v = compare_outputs(r.expected, r.actual, options.max_ulp, Stage::kCodegen)) return *v;
  for (const FaultRun& f : parsed.faults) {
    if (f.rc == 0 || f.calls_after != 0) {
      return {Stage::kCodegen, ErrorIgnored{f.fail_at, f.rc, f.calls_after}};
    }
  }
  return {Stage::kRun, Pass{}};
}

// The determinism oracle: the C of a copy of `fused` made through its text (equal, with fresh
// nodes at other addresses) must be byte for byte the C already emitted. Output that depends on
// addresses, hash orders or anything else outside the module is caught here.
std::optional<Verdict> check_determinism(const ir::Module& fused, const aot::Options& cg,
                                         const aot::CSources& first) {
  const ir::Module copy = ir::parse_module(ir::print_module(fused), "fused.relay");
  const aot::CSources second = aot::generate_c(copy, cg);
  add_prepare_work({.c_generations = 1});
  if (second.files == first.files) return std::nullopt;
  // The emitter always writes the same file names in the same order: the first text differs.
  std::size_t i = 0;
  while (i + 1 < first.files.size() && first.files[i] == second.files[i]) ++i;
  const std::string& name = first.files[i].first;
  return Verdict{Stage::kCodegen,
                 Nondeterministic{unified_diff(first.files[i].second, second.files[i].second,
                                               name + " (first)", name + " (second)")}};
}

}  // namespace

host::RunLimits case_limits(const ir::Module& annotated, const CaseOptions& options) {
  host::RunLimits limits = options.limits;
  // The report prints every output in hex, plus a line per traced call: a cap below that would
  // cut a correct program's report short (and batched runs would call it a flood).
  const std::uint64_t report = 2 * reference::output_bytes(annotated) + (std::uint64_t{64} << 10);
  limits.output_cap = static_cast<std::size_t>(std::max<std::uint64_t>(limits.output_cap, report));
  if (options.sanitize && limits.address_space != 0) {
    // A sanitizer runtime reserves terabytes of address space for its shadow: the same budget
    // is kept on resident memory instead.
    limits.resident_bytes = limits.address_space;
    limits.address_space = 0;
  }
  return limits;
}

std::optional<PreparedCase> prepare_case(const ir::Module& annotated, const CaseOptions& options,
                                         CaseResult& r, const CaseReference* reference,
                                         const StageMark* mark) {
  return system_of(options).prepare(annotated, options, r, reference, mark);
}

std::optional<PreparedCase> prepare_builtin_case(const ir::Module& annotated,
                                                 const CaseOptions& options, CaseResult& r,
                                                 const CaseReference* reference,
                                                 const StageMark* mark) {
  auto t0 = Clock::now();
  // 1-2. The reference result of the valid input, then the passes, each verified and interpreted.
  if (!reference_and_stages(annotated, options, reference, r, nullptr, mark)) return std::nullopt;
  const aot::Stages& stages = *r.stages;
  const auto t_codegen = Clock::now();
  // 3. C code and its static call arities.
  const aot::Options& cg = options.aot;
  PreparedCase c;
  aot::CSources sources;
  // TVM's naming of the C interface's inputs, transcribed apart from the pipeline: where TVM
  // refuses the input names, the pipeline must refuse them too, and the other way round.
  std::optional<std::string> tvm_refusal;
  if (cg.interface == aot::Options::Interface::kC) {
    try {
      reference::c_interface_input_names(annotated.main());
    } catch (const reference::TvmRefuses& e) {
      tvm_refusal = e.what();
    }
  }
  try {
    try {
      sources = aot::generate_c(stages.output(), cg);
      add_prepare_work({.c_generations = 1});
    } catch (const aot::CodegenRefusal& e) {
      r.verdict = tvm_refusal ? Verdict{Stage::kCodegen, InvalidInput{e.what()}}
                              : Verdict{Stage::kCodegen,
                                        Structure{std::string("the pipeline refuses the input (") +
                                                  e.what() + "); TVM's C interface accepts it"}};
      return std::nullopt;
    }
    if (tvm_refusal) {
      r.verdict = {Stage::kCodegen, Structure{"TVM refuses the input (" + *tvm_refusal +
                                              "); the pipeline generated its C"}};
      return std::nullopt;
    }
    if (auto v = options.check_determinism ? check_determinism(stages.output(), cg, sources)
                                           : std::nullopt) {
      r.verdict = std::move(*v);
      return std::nullopt;
    }
    c.inputs = harness_inputs(annotated, r.inputs);
    c.harness_case = harness_code_c(annotated, cg, c.inputs);
  } catch (const aot::CodegenError& e) {
    r.verdict = {Stage::kCodegen, PipelineError{e.what()}};
    return std::nullopt;
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kCodegen, PipelineError{e.what()}};
    return std::nullopt;
  }
  c.mod_name = cg.mod_name;
  c.header_name = aot::header_file_name(cg);
  c.sources = sources.files;
  for (const auto& site : sources.expected_arity) c.expected_args[site.callee] = site.num_args;
  r.files = c.program_files();
  try {
    const std::string& lib = sources.file(aot::lib_file_name(cg));
    auto actual_sites = static_arity(lib, cg.mod_name);
    auto diffs = arity_differences(sources.expected_arity, actual_sites);
    if (!diffs.empty()) {
      const auto& [want, got] = diffs.front();
      r.verdict = {Stage::kCodegen, Arity{want.callee, callee_kind_of(want.callee, cg.mod_name),
                                          want.num_args, got.num_args, ArityEvidence::kStatic}};
      return std::nullopt;
    }
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kCodegen, PipelineError{std::string("static arity: ") + e.what()}};
    return std::nullopt;
  }
  // A wasted buffer is reported only for a case that passes everything else: every other
  // verdict says more about the program, and a program that drops a slot frees buffers early.
  if (cg.storage_reuse) {
    try {
      c.instead_of_pass = check_workspace_reuse(aot::build_executor_program(stages.output(), cg));
    } catch (const ir::Error& e) {
      r.verdict = {Stage::kCodegen, PipelineError{std::string("executor program: ") + e.what()}};
      return std::nullopt;
    }
  }
  r.pipeline_time = since(t0);
  r.codegen_time = since(t_codegen);
  return finish_prepared_case(annotated, options, std::move(c), r);
}

std::optional<PreparedCase> finish_prepared_case(const ir::Module& annotated,
                                                 const CaseOptions& options, PreparedCase c,
                                                 CaseResult& r) {
  if (options.in_process_only) {
    r.verdict = c.instead_of_pass.value_or(Verdict{Stage::kCodegen, Pass{}});
    return std::nullopt;
  }
  c.limits = case_limits(annotated, options);
  c.compiler = options.compiler;
  c.toolchain = options.toolchain;
  c.sanitize = options.sanitize;
  c.keep_files = options.keep_files;
  c.check_warnings = options.check_warnings;
  return c;
}

namespace {

void judge_raw(const ir::Module& annotated, const CaseOptions& options,
               const PreparedCase& prepared, const RawResult& raw, CaseResult& r) {
  r.compile_time = raw.compile_time;
  r.run_time = raw.run_time;
  r.work_dir = raw.work_dir;
  if (raw.settled) {
    r.verdict = *raw.settled;
    if (auto* c = std::get_if<CompileError>(&r.verdict.detail);
        c && prepared.diagnostic_in_signature) {
      c->diagnostic = diagnostic_class(c->diagnostics);
    }
    return;
  }
  try {
    r.verdict = judge_run(annotated, options, prepared, raw, r);
    if (r.verdict.kind() == VerdictKind::kPass && prepared.instead_of_pass) {
      r.verdict = *prepared.instead_of_pass;
    }
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kRun, ToolchainError{e.what()}};
  } catch (const std::exception& e) {
    r.verdict = {Stage::kRun, ToolchainError{std::string("harness failure: ") + e.what()}};
  }
}

}  // namespace

void judge_case(const ir::Module& annotated, const CaseOptions& options,
                const PreparedCase& prepared, const RawResult& raw, CaseResult& r,
                SingleProgramExecutor* confirming_executor) {
  judge_raw(annotated, options, prepared, raw, r);
  // A known behaviour stands in for a pass: the program ran right.
  if (!prepared.confirm_compiler || r.verdict.kind() == VerdictKind::kPass ||
      r.verdict.kind() == VerdictKind::kKnown) {
    return;
  }
  PreparedCase confirming = prepared;
  confirming.compiler = prepared.confirm_compiler;
  confirming.toolchain.reset();
  confirming.confirm_compiler.reset();
  confirming.syntax_check_first = r.verdict.kind() == VerdictKind::kCompileError;
  const auto stand_in_compile = r.compile_time;
  SingleProgramExecutor own;
  SingleProgramExecutor& executor = confirming_executor != nullptr ? *confirming_executor : own;
  const auto again = executor.run(std::span<const PreparedCase>(&confirming, 1));
  judge_raw(annotated, options, confirming, again.front(), r);
  r.compile_time += stand_in_compile;
}

}  // namespace aotfuzz::oracle

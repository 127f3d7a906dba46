// run_case: the differential test of one graph, every outcome a verdict.
#include "oracle/oracle.h"

#include <fstream>
#include <map>

#include "aot/codegen_error.h"
#include "ir/error.h"
#include "oracle/harness.h"
#include "oracle/stages.h"
#include "oracle/static_arity.h"
#include "oracle/tempdir.h"

namespace aotfuzz::oracle {
namespace {

using Clock = std::chrono::steady_clock;

std::chrono::microseconds since(Clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::microseconds>(Clock::now() - t0);
}

CalleeKind callee_kind(const std::string& callee, const std::string& mod_name) {
  const std::string prefix = "tvmgen_" + mod_name + "_";
  if (callee == prefix + "run_model") return CalleeKind::kExecutor;
  if (callee == prefix + "run") return CalleeKind::kEntry;
  if (callee.rfind(prefix + "fused_", 0) == 0) return CalleeKind::kKernel;
  return CalleeKind::kExternal;
}

}  // namespace

std::string replay_flags(const CaseOptions& o) {
  std::string f = o.aot.merge ? "--merge" : "--no-merge";
  if (o.aot.mod_name != "default") f += " --mod-name " + o.aot.mod_name;
  f += o.aot.api == aot::Options::Api::kPacked ? " --api packed" : " --api unpacked";
  f += o.aot.interface == aot::Options::Interface::kPacked ? " --interface packed"
                                                           : " --interface c";
  f += o.aot.storage_reuse ? " --storage-reuse" : " --no-storage-reuse";
  if (o.compiler) f += " --cc " + std::string(compiler_kind_name(*o.compiler));
  if (o.sanitize) f += " --sanitize";
  if (o.input_seed != 1) f += " --input-seed " + std::to_string(o.input_seed);
  for (const auto& row : aot::bug_table()) {
    if (o.aot.bugs.on(row.bug)) f += " --inject " + std::string(row.name);
  }
  return f;
}

CaseResult run_case(const ir::Module& annotated, const CaseOptions& options) {
  CaseResult r;
  auto t0 = Clock::now();
  // 1-2. The reference result of the valid input, then the passes, each verified and interpreted.
  if (!reference_and_stages(annotated, options, nullptr, r)) return r;
  const aot::Stages& stages = *r.stages;
  // 3. C code and its static call arities.
  const aot::Options& cg = options.aot;
  aot::CSources sources;
  try {
    sources = aot::generate_c(stages.output(), cg);
    r.files = sources.files;
    r.files.emplace_back("main.c", harness_c(annotated, cg, r.inputs));
  } catch (const aot::CodegenError& e) {
    r.verdict = {Stage::kCodegen, PipelineError{e.what()}};
    return r;
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kCodegen, PipelineError{e.what()}};
    return r;
  }
  std::map<std::string, int> expected_args;
  for (const auto& site : sources.expected_arity) expected_args[site.callee] = site.num_args;
  try {
    const std::string& lib = sources.file(aot::lib_file_name(cg));
    auto actual_sites = static_arity(lib, cg.mod_name);
    auto diffs = arity_differences(sources.expected_arity, actual_sites);
    if (!diffs.empty()) {
      const auto& [want, got] = diffs.front();
      r.verdict = {Stage::kCodegen, Arity{want.callee, callee_kind(want.callee, cg.mod_name),
                                          want.num_args, got.num_args, ArityEvidence::kStatic}};
      return r;
    }
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kCodegen, PipelineError{std::string("static arity: ") + e.what()}};
    return r;
  }
  r.pipeline_time = since(t0);
  if (options.in_process_only) {
    r.verdict = {Stage::kCodegen, Pass{}};
    return r;
  }
  // 4. Compile and run out of process.
  const CompilerKind kind = options.compiler.value_or(CompilerKind::kTcc);
  std::optional<Toolchain> tc = options.toolchain;
  if (!tc) tc = options.compiler ? find_toolchain(*options.compiler) : default_toolchain();
  if (!tc) {
    r.verdict = {Stage::kRun, ToolchainError{"no C compiler found (" +
                                             std::string(compiler_kind_name(kind)) + ")"}};
    return r;
  }
  try {
    TempDir dir("aotfuzz-case");
    if (options.keep_files) dir.keep();
    r.work_dir = dir.path().string();
    std::vector<std::string> c_files;
    for (const auto& [name, text] : r.files) {
      const std::string path = dir.file(name).string();
      std::ofstream out(path, std::ios::binary);
      out << text;
      if (!out) throw ir::Error("cannot write " + path);
      if (name.size() > 2 && name.substr(name.size() - 2) == ".c") c_files.push_back(path);
    }
    CompileOptions co;
    co.include_dirs = {dir.path().string()};
    co.defines = {"AOTFUZZ_TRACE"};
    co.sanitize = options.sanitize;
    const std::string exe = dir.file("case").string();
    auto t1 = Clock::now();
    CompileResult cr = compile(*tc, c_files, exe, co);
    r.compile_time = since(t1);
    if (auto v = verdict_from_compile(cr, tc->kind)) {
      r.verdict = *v;
      return r;
    }
    RunLimits limits = options.limits;
    limits.working_dir = dir.path().string();
    auto t2 = Clock::now();
    RunResult run = run_process({exe}, limits);
    r.run_time = since(t2);
    ParsedRun parsed = parse_harness_output(run.stdout_text);
    if (run.kind == ExitKind::kExited && run.exit_code == kInputClobberedExit &&
        parsed.clobbered_input) {
      r.verdict = {Stage::kRun, InputClobbered{parsed.clobbered_input->first,
                                               parsed.clobbered_input->second, "", ""}};
      return r;
    }
    if (run.kind == ExitKind::kExited && run.exit_code == kHarnessErrorExit) {
      r.verdict = {Stage::kRun,
                   ToolchainError{"harness: " + parsed.harness_error.value_or(run.describe())}};
      return r;
    }
    // Dynamic arity: every traced call against what its callee takes.
    for (const auto& trace : parsed.traces) {
      for (const auto& call : trace) {
        auto it = expected_args.find(call.callee);
        if (it != expected_args.end() && it->second != call.num_args) {
          r.verdict = {Stage::kRun, Arity{call.callee, callee_kind(call.callee, cg.mod_name),
                                          it->second, call.num_args, ArityEvidence::kDynamic}};
          return r;
        }
      }
    }
    if (auto v = verdict_from_run(run, limits)) {
      if (auto* crash = std::get_if<Crash>(&v->detail)) {
        if (!parsed.traces.empty() && !parsed.traces.back().empty()) {
          crash->callee = parsed.traces.back().back().callee;
          crash->callee_kind = callee_kind(crash->callee, cg.mod_name);
        }
        if (parsed.out_of_bounds) {
          crash->stderr_tail = "write past the end of " + parsed.out_of_bounds->first + " " +
                               std::to_string(parsed.out_of_bounds->second) + "\n" +
                               crash->stderr_tail;
        }
      }
      r.verdict = *v;
      return r;
    }
    if (!parsed.completed || run.exit_code != 0) {
      r.verdict = {Stage::kRun,
                   Crash{0, std::nullopt, "", "test program exited with " + run.describe()}};
      return r;
    }
    if (parsed.rc() && *parsed.rc() != 0) {
      r.verdict = {Stage::kRun, PipelineError{"tvmgen_" + cg.mod_name + "_run returned " +
                                              std::to_string(*parsed.rc())}};
      return r;
    }
    if (!parsed.unwritten.empty()) {
      r.verdict = {Stage::kCodegen, OutputUnwritten{parsed.unwritten.front().first,
                                                    parsed.unwritten.front().second}};
      return r;
    }
    r.actual = output_values(parsed, annotated.main());
    if (auto v = compare_outputs(r.expected, r.actual, options.max_ulp, Stage::kCodegen)) {
      r.verdict = *v;
      return r;
    }
    r.verdict = {Stage::kRun, Pass{}};
  } catch (const ir::Error& e) {
    r.verdict = {Stage::kRun, ToolchainError{e.what()}};
  } catch (const std::exception& e) {
    r.verdict = {Stage::kRun, ToolchainError{std::string("harness failure: ") + e.what()}};
  }
  return r;
}

}  // namespace aotfuzz::oracle

// run_case: the differential test of one graph, every outcome a verdict.
#include "oracle/oracle.h"

#include <cstdio>

#include "host/shell_words.h"
#include "oracle/case_flow.h"
#include "oracle/executor.h"
#include "oracle/in_process_probe.h"
#include "oracle/sut.h"

namespace aotfuzz::oracle {

using host::shell_quote;

std::optional<CaseOptions> fixed_options(const CaseOptions& options) {
  return system_of(options).fixed_case(options);
}

std::string replay_flags(const CaseOptions& o) {
  std::string f = o.aot.merge ? "--merge" : "--no-merge";
  if (o.aot.mod_name != "default") f += " --mod-name " + shell_quote(o.aot.mod_name);
  f += o.aot.api == aot::Options::Api::kPacked ? " --api packed" : " --api unpacked";
  f += o.aot.interface == aot::Options::Interface::kPacked ? " --interface packed"
                                                           : " --interface c";
  f += o.aot.storage_reuse ? " --storage-reuse" : " --no-storage-reuse";
  if (o.aot.max_fuse_depth != aot::kDefaultMaxFuseDepth) {
    f += " --max-fuse-depth " + std::to_string(o.aot.max_fuse_depth);
  }
  if (o.compiler) f += " --cc " + std::string(host::compiler_kind_name(*o.compiler));
  if (o.sanitize) f += " --sanitize";
  if (o.aot.check_num_args) f += " --check-num-args";
  if (o.input_seed != 1) f += " --input-seed " + std::to_string(o.input_seed);
  if (o.max_ulp != 0) f += " --ulp " + std::to_string(o.max_ulp);
  if (o.memory_budget != CaseOptions().memory_budget) {
    // In MiB as on the command line (rounded up); no budget is the largest one it takes.
    const std::uint64_t mib = o.memory_budget == 0 || o.memory_budget >= (std::uint64_t{1} << 63)
                                  ? std::uint64_t{1} << 44
                                  : (o.memory_budget + (std::uint64_t{1} << 20) - 1) >> 20;
    f += " --memory-budget " + std::to_string(mib);
  }
  for (const auto& row : aot::bug_table()) {
    if (o.aot.bugs.on(row.bug)) f += " --inject " + std::string(row.name);
  }
  if (o.in_process_only) f += " --no-run";
  if (!o.check_structure) f += " --no-structure";
  if (!o.check_determinism) f += " --no-determinism";
  if (!o.check_warnings) f += " --no-warnings";
  f += sut_replay_flags(system_of(o).spec());
  if (o.in_process_budget != CaseOptions().in_process_budget) {
    char seconds[32];
    std::snprintf(seconds, sizeof seconds, "%g", o.in_process_budget.count() / 1000.0);
    f += " --in-process-time " + std::string(seconds);
  }
  if (o.aot.debug_fault != aot::Options::DebugFault::kNone) {
    f += " --debug-fault " + shell_quote(aot::debug_fault_spec(o.aot));
  }
  return f;
}

CaseResult run_case(const ir::Module& annotated, const CaseOptions& options) {
  CaseResult r;
  if (options.isolate_in_process) {
    if (auto v = probe_in_process(annotated, options)) {
      r.verdict = std::move(*v);
      return r;
    }
  }
  std::optional<PreparedCase> prepared = prepare_case(annotated, options, r);
  if (!prepared) return r;
  SingleProgramExecutor executor;
  const auto raw = executor.run(std::span<const PreparedCase>(&*prepared, 1));
  judge_case(annotated, options, *prepared, raw.front(), r);
  return r;
}

}  // namespace aotfuzz::oracle

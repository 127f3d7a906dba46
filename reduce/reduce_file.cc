// reduce_file: the reduce command's decisions, testable without the command line.
#include "reduce/reduce_file.h"

#include "bundles/bundle.h"
#include "oracle/verdict.h"
#include "reduce/finding_rule.h"

namespace aotfuzz::reduce {

std::vector<std::string> reduced_file_header(const std::string& file, const ReduceResult& r,
                                             const std::string& signature,
                                             const std::string& flags) {
  return {"origin: reduced by `aotfuzz reduce` from " + file,
          "reduced: ops " + std::to_string(r.before.ops) + " -> " + std::to_string(r.after.ops) +
              ", inputs " + std::to_string(r.before.inputs) + " -> " +
              std::to_string(r.after.inputs) + ", " + std::to_string(r.steps) + " steps" +
              (r.minimal ? " (1-minimal)" : ""),
          "finding: " + signature, bundles::format_replay_line(flags, signature).substr(3)};
}

ReductionPlan plan_reduction(const ReduceFileRequest& request) {
  ReductionPlan plan;
  plan.options = request.options;
  plan.flags = oracle::replay_flags(plan.options);
  if (!request.flags_given) {
    std::vector<bundles::ReplayLine> lines;
    try {
      lines = bundles::parse_replay_lines(request.text, request.file);
    } catch (const bundles::ReplayError& e) {
      throw ReduceFileError(e.what());
    }
    plan.flags_from = bundles::first_finding_line(lines);
    if (plan.flags_from) {
      plan.flags = plan.flags_from->flags + request.settings;
      try {
        plan.options = systems::parse_case_flags(plan.flags);
      } catch (const oracle::FlagError& e) {
        throw ReduceFileError(request.file + ":" + std::to_string(plan.flags_from->line) + ": " +
                              e.what());
      }
    }
  }
  plan.signature = request.signature;
  if (plan.signature.empty()) {
    const oracle::Verdict original = oracle::run_case(request.module, plan.options).verdict;
    if (!oracle::is_finding(original)) {
      throw ReduceFileError("reduce: " + request.file + " gives " + oracle::summary(original) +
                            " with these flags: nothing to reduce (use --signature)");
    }
    plan.signature = oracle::signature(original);
  }
  return plan;
}

ReducedFile reduce_file(const ReduceFileRequest& request, const ReductionPlan& plan) {
  ReducedFile out;
  // A campaign's rule, so that a file reduces to the repro its campaign's bundle would hold.
  out.result = reduce_finding(request.module, plan.options, plan.signature, request.reduce).result;
  if (out.result.evaluated == 1 && out.result.steps == 0 && !out.result.minimal) {
    throw ReduceFileError("reduce: " + request.file + " does not give " + plan.signature);
  }
  out.text = bundles::relay_with_header(
      out.result.module, reduced_file_header(request.file, out.result, plan.signature, plan.flags));
  return out;
}

}  // namespace aotfuzz::reduce

// Reference result and the interpreted pass-by-pass comparison of one case.
#include "oracle/stages.h"

#include <algorithm>
#include <string>

#include "aot/pass_error.h"
#include "ir/error.h"
#include "ir/verify.h"
#include "oracle/prepare_work.h"
#include "oracle/structure.h"
#include "reference/footprint.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace aotfuzz::oracle {
namespace {

std::vector<reference::Value> outputs_of(const ir::Module& module,
                                         const std::vector<reference::Value>& inputs,
                                         reference::PlanCache* plans) {
  add_prepare_work({.reference_runs = 1});
  return (plans != nullptr ? reference::run_main(module, inputs, *plans)
                           : reference::run_main(module, inputs))
      .flatten();
}

}  // namespace

CaseReference case_reference(const ir::Module& annotated, std::uint64_t input_seed,
                             reference::PlanCache* plans, std::uint64_t memory_budget) {
  CaseReference ref;
  try {
    ir::verify(annotated);
    // Before any tensor is allocated: a graph over the budget is refused, not run out of memory.
    if (auto why = reference::over_memory_budget(annotated, memory_budget)) {
      ref.invalid = Verdict{Stage::kAnnotated, InvalidInput{*why}};
      return ref;
    }
    ref.inputs = reference::make_inputs(annotated.main(), input_seed);
    ref.expected = outputs_of(annotated, ref.inputs, plans);
  } catch (const ir::Error& e) {
    ref.invalid = Verdict{Stage::kAnnotated, InvalidInput{e.what()}};
  }
  return ref;
}

std::optional<Verdict> compare_outputs(const std::vector<reference::Value>& expected,
                                       const std::vector<reference::Value>& actual,
                                       std::uint32_t ulp, Stage stage) {
  if (expected.size() != actual.size()) {
    return Verdict{stage, Mismatch{static_cast<int>(std::min(expected.size(), actual.size())), 0,
                                   std::to_string(expected.size()) + " outputs",
                                   std::to_string(actual.size()) + " outputs"}};
  }
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (auto mm = reference::first_mismatch(expected[i], actual[i], ulp)) {
      return Verdict{stage, Mismatch{static_cast<int>(i), static_cast<std::int64_t>(mm->element),
                                     mm->expected, mm->actual}};
    }
  }
  return std::nullopt;
}

namespace {

// The module a pass took: the stage before its own (a disabled pass's stage repeats its input).
const ir::Module& input_of(const aot::Stages& stages, aot::Stage stage) {
  return stages.at(static_cast<aot::Stage>(static_cast<unsigned>(stage) - 1));
}

const aot::PassInfo& pass_of(aot::Stage stage) {
  for (const auto& row : aot::pass_table()) {
    if (row.stage == stage) return row;
  }
  throw std::logic_error("no pass outputs stage " + std::string(aot::stage_name(stage)));
}

// check_structure, with a failure of the reference itself reported as the harness's (never a
// finding against the pipeline).
std::optional<Verdict> structure_verdict(const aot::PassInfo& pass, const ir::Module& input,
                                         const ir::Module* output, const std::string& refusal,
                                         const aot::Options& options) {
  try {
    return check_structure(pass, input, output, refusal, options);
  } catch (const std::exception& e) {
    return Verdict{pass.stage, ToolchainError{"the reference " + std::string(pass.name) +
                                              " pass failed (a harness bug): " + e.what()}};
  }
}

}  // namespace

Stage next_stage(Stage stage, const aot::Options& options) {
  for (const auto& row : aot::pass_table()) {
    if (row.stage > stage && row.enabled(options)) return row.stage;
  }
  return Stage::kCodegen;
}

std::optional<Verdict> run_stages(const ir::Module& annotated, aot::Options options,
                                  const CaseReference& reference, std::uint32_t ulp,
                                  aot::Stages& stages, reference::PlanCache* plans,
                                  bool check_structure,
                                  std::vector<reference::Value>* mismatch_actual,
                                  const StageMark* mark) {
  // The reference verified the input; the passes verify their outputs (PassError kBrokenOutput).
  options.verify_input = false;
  std::optional<Verdict> verdict;
  // The per-stage reference check: each pass's output interpreted on the case's inputs.
  auto check_stage = [&](const aot::PassInfo& pass, const ir::Module& output) {
    try {
      std::vector<reference::Value> actual = outputs_of(output, reference.inputs, plans);
      verdict = compare_outputs(reference.expected, actual, ulp, pass.stage);
      if (verdict && mismatch_actual != nullptr) *mismatch_actual = std::move(actual);
    } catch (const ir::Error& e) {
      verdict = Verdict{pass.stage, PipelineError{"interpreting the output of " +
                                                  std::string(pass.name) + ": " + e.what()}};
    }
    if (!verdict && check_structure) {
      verdict = structure_verdict(pass, input_of(stages, pass.stage), &output, "", options);
    }
    if (!verdict && mark != nullptr) (*mark)(next_stage(pass.stage, options));
    return !verdict;
  };
  try {
    aot::run_pipeline(annotated, options, stages, check_stage);
  } catch (const aot::PassError& e) {
    if (e.kind() != aot::PassError::Kind::kRejectedInput) {
      return Verdict{*stages.failed, PipelineError{e.what()}};
    }
    if (check_structure) {
      const aot::Stage stage = *stages.failed;
      if (auto v = structure_verdict(pass_of(stage), input_of(stages, stage), nullptr, e.what(),
                                     options)) {
        return v;
      }
    }
    return Verdict{*stages.failed, InvalidInput{e.what()}};
  } catch (const ir::Error& e) {
    const aot::Stage stage = *stages.failed;
    return Verdict{stage, PipelineError{std::string(aot::stage_name(stage)) + ": " + e.what()}};
  }
  return verdict;
}

bool reference_and_stages(const ir::Module& annotated, const CaseOptions& options,
                          const CaseReference* reference, CaseResult& r,
                          reference::PlanCache* plans, const StageMark* mark) {
  CaseReference computed;
  if (reference == nullptr) {
    computed = case_reference(annotated, options.input_seed, plans, options.memory_budget);
    reference = &computed;
  }
  if (reference->invalid) {
    r.verdict = *reference->invalid;
    return false;
  }
  aot::Stages stages;
  const std::optional<Verdict> v = run_stages(annotated, options.aot, *reference,
                                              options.max_ulp, stages, plans,
                                              options.check_structure, &r.actual, mark);
  // After run_stages, which reads them: a reference computed here is not needed any more.
  if (reference == &computed) {
    r.inputs = std::move(computed.inputs);
    r.expected = std::move(computed.expected);
  } else {
    r.inputs = reference->inputs;
    r.expected = reference->expected;
  }
  r.stages = std::move(stages);
  if (v) r.verdict = *v;
  return !v;
}

}  // namespace aotfuzz::oracle

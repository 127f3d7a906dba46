// Reference result and the interpreted pass-by-pass comparison of one case.
#include "oracle/stages.h"

#include <algorithm>
#include <string>

#include "aot/pass_error.h"
#include "ir/error.h"
#include "ir/verify.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace aotfuzz::oracle {
namespace {

Stage stage_of_pass(aot::Pass pass) {
  switch (pass) {
    case aot::Pass::kMerge:
      return Stage::kMerge;
    case aot::Pass::kPartition:
      return Stage::kPartition;
    default:
      return Stage::kFuse;
  }
}

std::vector<reference::Value> outputs_of(const ir::Module& module,
                                         const std::vector<reference::Value>& inputs,
                                         reference::PlanCache* plans) {
  return (plans != nullptr ? reference::run_main(module, inputs, *plans)
                           : reference::run_main(module, inputs))
      .flatten();
}

}  // namespace

CaseReference case_reference(const ir::Module& annotated, std::uint64_t input_seed,
                             reference::PlanCache* plans) {
  CaseReference ref;
  try {
    ir::verify(annotated);
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

std::optional<Verdict> run_stages(const ir::Module& annotated, aot::PipelineOptions pipeline,
                                  const CaseReference& reference, std::uint32_t ulp,
                                  aot::Stages& stages, reference::PlanCache* plans) {
  // The reference verified the input; the passes verify their outputs (PassError kBrokenOutput).
  pipeline.verify_input = false;
  stages = aot::Stages{annotated, annotated, annotated, annotated};
  ir::Module current = annotated;
  for (const auto& info : aot::pass_table()) {
    if (info.pass == aot::Pass::kMerge && !pipeline.merge) continue;
    const Stage stage = stage_of_pass(info.pass);
    try {
      current = info.run(current, pipeline);
    } catch (const aot::PassError& e) {
      return e.kind() == aot::PassError::Kind::kRejectedInput
                 ? Verdict{stage, InvalidInput{e.what()}}
                 : Verdict{stage, PipelineError{e.what()}};
    } catch (const ir::Error& e) {
      return Verdict{stage, PipelineError{std::string(info.name) + ": " + e.what()}};
    }
    // A stage holds the module after its pass; later stages start from it.
    switch (info.pass) {
      case aot::Pass::kMerge:
        stages.merged = current;
        [[fallthrough]];
      case aot::Pass::kPartition:
        stages.partitioned = current;
        [[fallthrough]];
      default:
        stages.fused = current;
    }
    try {
      auto got = outputs_of(current, reference.inputs, plans);
      if (auto v = compare_outputs(reference.expected, got, ulp, stage)) return v;
    } catch (const ir::Error& e) {
      return Verdict{stage, PipelineError{std::string("interpreting the output of ") +
                                          std::string(info.name) + ": " + e.what()}};
    }
  }
  return std::nullopt;
}

bool reference_and_stages(const ir::Module& annotated, const CaseOptions& options,
                          const CaseReference* reference, CaseResult& r,
                          reference::PlanCache* plans) {
  CaseReference computed;
  if (reference == nullptr) {
    computed = case_reference(annotated, options.input_seed, plans);
    reference = &computed;
  }
  if (reference->invalid) {
    r.verdict = *reference->invalid;
    return false;
  }
  aot::Stages stages;
  const std::optional<Verdict> v =
      run_stages(annotated, options.pipeline, *reference, options.max_ulp, stages, plans);
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

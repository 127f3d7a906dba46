#include "oracle/structure.h"

#include "ir/structural.h"
#include "oracle/module_diff.h"
#include "reference/tvm_passes.h"

namespace aotfuzz::oracle {
namespace {

ir::Module reference_merge(const ir::Module& input, const aot::Options&) {
  return reference::merge_compiler_regions(input);
}
ir::Module reference_partition(const ir::Module& input, const aot::Options& options) {
  return reference::partition_graph(input, options.mod_name);
}
ir::Module reference_fuse(const ir::Module& input, const aot::Options& options) {
  return reference::fuse_ops(input, options.max_fuse_depth);
}

// The reference of each pass of aot/passes.def, by the pass's CLI name.
struct ReferenceRow {
  std::string_view pass;
  ReferencePass run;
};
constexpr ReferenceRow kReferencePasses[] = {
    {"merge", reference_merge},
    {"partition", reference_partition},
    {"fuse", reference_fuse},
};

// Whether the two modules print the same (print_by_name), without printing them: the same
// function names, each pair structurally equal with the same variable names.
bool same_modules(const ir::Module& a, const ir::Module& b) {
  if (a.size() != b.size()) return false;
  for (const auto& [name, fn] : a.functions()) {
    const ir::Function* other = b.find(name);
    if (other == nullptr || !ir::closed_functions_equal(fn, *other, ir::VarNames::kCompared)) {
      return false;
    }
  }
  return true;
}

}  // namespace

ReferencePass reference_pass(std::string_view pass_name) {
  for (const ReferenceRow& row : kReferencePasses) {
    if (row.pass == pass_name) return row.run;
  }
  return nullptr;
}

std::optional<ir::Module> reference_stage_module(aot::Stage stage, const aot::Stages& stages,
                                                 const aot::Options& options) {
  for (const auto& row : aot::pass_table()) {
    if (row.stage != stage) continue;
    const ReferencePass run = reference_pass(row.name);
    if (run == nullptr) return std::nullopt;
    try {
      return run(stages.at(static_cast<aot::Stage>(static_cast<unsigned>(stage) - 1)), options);
    } catch (const reference::TvmRefuses&) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<Verdict> check_structure(const aot::PassInfo& pass, const ir::Module& input,
                                       const ir::Module* output, const std::string& refusal,
                                       const aot::Options& options) {
  const ReferencePass run = reference_pass(pass.name);
  if (run == nullptr) return std::nullopt;
  // Graphs beyond what the reference passes take are not checked structurally (no generator or
  // reducer makes them; long-graph tests do).
  for (const auto& [name, fn] : input.functions()) {
    if (fn->body_order().size() > reference::kMaxReferenceNodes) return std::nullopt;
  }
  const std::string pipeline_name = "pipeline/" + std::string(pass.module_name);
  const std::string reference_name = "tvm-v0.8-rules/" + std::string(pass.module_name);
  std::optional<ir::Module> expected;
  std::string tvm_refusal;
  try {
    expected = run(input, options);
  } catch (const reference::TvmRefuses& e) {
    tvm_refusal = e.what();
  }
  if (!expected) {
    if (output == nullptr) return std::nullopt;
    return Verdict{pass.stage, Structure{"the pipeline's " + std::string(pass.name) +
                                         " gives a module where " + tvm_refusal +
                                         "\n--- " + pipeline_name + "\n" +
                                         print_by_name(*output)}};
  }
  if (output != nullptr && same_modules(*output, *expected)) return std::nullopt;
  const std::string want = print_by_name(*expected);
  if (output == nullptr) {
    return Verdict{pass.stage, Structure{"the pipeline's " + std::string(pass.name) +
                                         " refuses the input (" + refusal +
                                         ") where TVM v0.8's rules give a module\n+++ " +
                                         reference_name + "\n" + want}};
  }
  std::string diff = unified_diff(print_by_name(*output), want, pipeline_name, reference_name);
  if (diff.empty()) return std::nullopt;
  return Verdict{pass.stage, Structure{std::move(diff)}};
}

}  // namespace aotfuzz::oracle

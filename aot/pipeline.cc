// The pass table and the staged pipeline.
#include "aot/pipeline.h"

#include "aot/fuse_ops.h"
#include "aot/merge_compiler_regions.h"
#include "aot/partition_graph.h"
#include "ir/verify.h"

namespace aotfuzz::aot {

const std::vector<PassInfo>& pass_table() {
  static const std::vector<PassInfo> kTable = {
#define AOTFUZZ_PASS(id, name, function, description) {Pass::id, name, &function, description},
#include "aot/passes.def"
#undef AOTFUZZ_PASS
  };
  return kTable;
}

std::optional<Pass> parse_pass(std::string_view name) {
  for (const auto& row : pass_table()) {
    if (row.name == name) return row.pass;
  }
  return std::nullopt;
}

const PassInfo& pass_info(Pass pass) { return pass_table().at(static_cast<unsigned>(pass)); }

const std::vector<std::string_view>& stage_names() {
  static const std::vector<std::string_view> kNames = {"annotated", "merged", "partitioned",
                                                       "fused"};
  return kNames;
}

const ir::Module* Stages::stage(std::string_view name) const {
  if (name == "annotated") return &annotated;
  if (name == "merged") return &merged;
  if (name == "partitioned") return &partitioned;
  if (name == "fused") return &fused;
  return nullptr;
}

Stages run_passes(const ir::Module& annotated, const PipelineOptions& options) {
  ir::verify(annotated);
  // Each stage is verified once, as the output of its pass.
  PipelineOptions inner = options;
  inner.verify_input = false;
  Stages stages;
  stages.annotated = annotated;
  // Each stage's module, in table order; a pass reads the previous stage.
  ir::Module* slot[] = {&stages.merged, &stages.partitioned, &stages.fused};
  static_assert(std::size(slot) == static_cast<std::size_t>(Pass::kCount));
  const ir::Module* previous = &stages.annotated;
  for (const auto& row : pass_table()) {
    ir::Module& out = *slot[static_cast<unsigned>(row.pass)];
    out = row.pass == Pass::kMerge && !options.merge ? *previous : row.run(*previous, inner);
    previous = &out;
  }
  return stages;
}

}  // namespace aotfuzz::aot

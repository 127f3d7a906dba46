#include "tests/support/modules.h"

#include "aot/pipeline.h"
#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/rng.h"
#include "ir/verify.h"
#include "tests/support/files.h"

namespace aotfuzz::test_support {

ir::Module parse_verified(const std::string& text, const std::string& name) {
  ir::Module m = ir::parse_module(text, name);
  ir::verify(m);
  return m;
}

ir::Module load(std::string_view relative) {
  const auto path = source_path(relative);
  return parse_verified(read_text(path), path.string());
}

ir::Module seed_9036() { return load("corpus/seed/tvm_9036_annotated.relay"); }

std::vector<ir::Module> annotated_corpus() {
  std::vector<ir::Module> out;
  for (const auto& f : corpus_files()) {
    try {
      ir::Module m = parse_verified(read_text(f), f.string());
      if (m.size() == 1) out.push_back(m);
    } catch (const ir::Error&) {
      // Some conformance graphs are invalid on purpose.
    }
  }
  return out;
}

ir::Module fused_of(const ir::Module& annotated, bool merge, const std::string& mod_name) {
  aot::Options options;
  options.merge = merge;
  options.mod_name = mod_name;
  return aot::run_passes(annotated, options).output();
}

ir::Module generated(std::uint64_t seed, int ops) {
  generator::GenPolicy policy;
  policy.max_ops = ops;
  ir::Rng rng(seed);
  return generator::generate(policy, rng);
}

}  // namespace aotfuzz::test_support

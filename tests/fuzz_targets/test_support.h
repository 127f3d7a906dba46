// Helpers of the fuzz-target tests: corpus files, the #9036 seed through the passes, generated
// graphs and the options of one case.
#pragma once

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "aot/pipeline.h"
#include "generator/builder.h"
#include "ir/parser.h"
#include "ir/verify.h"
#include "oracle/oracle.h"

namespace aotfuzz::fuzz_targets_testing {

inline std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

inline ir::Module parse_file(const std::filesystem::path& path) {
  ir::Module m = ir::parse_module(read_text(path), path.string());
  ir::verify(m);
  return m;
}

/// The annotated graph of TVM #9036 (corpus/seed).
inline ir::Module seed_9036() {
  return parse_file(std::filesystem::path(AOTFUZZ_SOURCE_DIR) /
                    "corpus/seed/tvm_9036_annotated.relay");
}

/// Every .relay file under corpus/, in name order.
inline std::vector<std::filesystem::path> corpus_files() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::recursive_directory_iterator(
           std::filesystem::path(AOTFUZZ_SOURCE_DIR) / "corpus")) {
    if (e.is_regular_file() && e.path().extension() == ".relay") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

/// The corpus graphs that are annotated single-function modules (what the mutator edits).
inline std::vector<ir::Module> annotated_corpus() {
  std::vector<ir::Module> out;
  for (const auto& f : corpus_files()) {
    try {
      ir::Module m = parse_file(f);
      if (m.size() == 1) out.push_back(m);
    } catch (const ir::Error&) {
      // Some conformance graphs are invalid on purpose.
    }
  }
  return out;
}

/// `annotated` through every pass.
inline ir::Module fused_of(const ir::Module& annotated, bool merge = true) {
  aot::Options options;
  options.merge = merge;
  return aot::run_passes(annotated, options).at(aot::Stage::kFuse);
}

/// A generated graph of about `ops` builder steps.
inline ir::Module generated(std::uint64_t seed, int ops = 16) {
  generator::GenPolicy policy;
  policy.max_ops = ops;
  ir::Rng rng(seed);
  return generator::generate(policy, rng);
}

}  // namespace aotfuzz::fuzz_targets_testing

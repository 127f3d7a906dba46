// Test support: modules from text, from the corpus, through the passes, and generated.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "ir/module.h"

namespace aotfuzz::test_support {

/// `text` parsed and verified (throws ir::ParseError or ir::VerifyError).
ir::Module parse_verified(const std::string& text, const std::string& name = "<test>");
/// The repository file `relative` (e.g. "corpus/seed/tvm_9036_annotated.relay"), parsed and
/// verified.
ir::Module load(std::string_view relative);
/// The annotated graph of TVM #9036 (corpus/seed/tvm_9036_annotated.relay).
ir::Module seed_9036();
/// The corpus graphs that verify and are single-function annotated modules (what the graph
/// mutator edits); the invalid-on-purpose conformance graphs are left out.
std::vector<ir::Module> annotated_corpus();
/// `annotated` through every pass (merging on by default).
ir::Module fused_of(const ir::Module& annotated, bool merge = true,
                    const std::string& mod_name = "default");
/// A generated graph of at most `ops` builder steps.
ir::Module generated(std::uint64_t seed, int ops = 16);

}  // namespace aotfuzz::test_support

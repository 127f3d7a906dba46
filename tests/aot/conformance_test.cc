// Conformance with TVM v0.8: every corpus/conformance/*.relay graph yields exactly the modules,
// kernel names and errors its `// check` header lines state (see corpus/conformance/README.md).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "aot/fuse_ops.h"
#include "aot/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/verify.h"
#include "reference/tvm_passes.h"
#include "tests/support/files.h"

namespace aotfuzz::aot {
namespace {

namespace fs = std::filesystem;

const fs::path kCorpus = test_support::source_path("corpus/conformance");

using test_support::relay_files;

// One `// check <what> (<pipelines>): <argument>` line and, for stage checks, its `//|` block.
struct Check {
  std::string what;  // merged | partitioned | fused | kernels | error
  std::vector<bool> merge_values;
  std::string argument;
  std::string module_text;
  int line = 0;
};

struct Header {
  bool has_origin = false;
  bool has_expect = false;
  std::vector<Check> checks;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

Header parse_header(const std::string& text) {
  Header h;
  std::istringstream in(text);
  std::string line;
  int number = 0;
  Check* block = nullptr;
  while (std::getline(in, line)) {
    ++number;
    if (line.rfind("//|", 0) == 0) {
      if (block == nullptr)
        throw std::runtime_error("line " + std::to_string(number) + ": //| outside a check");
      block->module_text += line.substr(line.size() > 3 && line[3] == ' ' ? 4 : 3) + "\n";
      continue;
    }
    block = nullptr;
    if (line.rfind("// origin:", 0) == 0) h.has_origin = true;
    if (lower(line).rfind("// expect", 0) == 0) h.has_expect = true;
    if (line.rfind("// check ", 0) != 0) continue;
    Check c;
    c.line = number;
    std::string rest = line.substr(9);
    auto open = rest.find(" (");
    auto close = rest.find("):");
    if (open == std::string::npos || close == std::string::npos || close < open) {
      throw std::runtime_error("line " + std::to_string(number) + ": malformed check");
    }
    c.what = rest.substr(0, open);
    const std::string pipes = rest.substr(open + 2, close - open - 2);
    if (pipes == "merge") {
      c.merge_values = {true};
    } else if (pipes == "no-merge") {
      c.merge_values = {false};
    } else if (pipes == "both") {
      c.merge_values = {true, false};
    } else {
      throw std::runtime_error("line " + std::to_string(number) + ": unknown pipeline " + pipes);
    }
    c.argument = rest.substr(close + 2);
    while (!c.argument.empty() && c.argument.front() == ' ') c.argument.erase(0, 1);
    h.checks.push_back(std::move(c));
    if (h.checks.back().what != "kernels" && h.checks.back().what != "error")
      block = &h.checks.back();
  }
  return h;
}

std::vector<std::string> split_words(const std::string& s) {
  std::istringstream in(s);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Parameter names of the global functions: part of the contract (`<target>_<id>_i<k>`), while
// structural equality treats them as bound variables.
std::vector<std::string> global_param_names(const ir::Module& m) {
  std::vector<std::string> out;
  for (const auto& [name, fn] : m.functions()) {
    for (const auto& p : fn->params()) out.push_back("@" + name + "/%" + p->name());
  }
  return out;
}

// The module's text with its functions in name order: TVM's modules are maps, so the order in
// which a pass adds functions is not part of what it computes.
std::string print_by_name(const ir::Module& m) {
  auto functions = m.functions();
  std::sort(functions.begin(), functions.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  ir::Module sorted;
  for (const auto& [name, fn] : functions) sorted.add(name, fn);
  return ir::print_module(sorted);
}

class Conformance : public ::testing::TestWithParam<fs::path> {};

TEST_P(Conformance, MatchesTheBehaviourItsHeaderStates) {
  const std::string text = test_support::read_text(GetParam());
  const Header header = parse_header(text);
  EXPECT_TRUE(header.has_origin) << "no // origin: line";
  EXPECT_TRUE(header.has_expect) << "no // expect: line";
  ASSERT_FALSE(header.checks.empty()) << "no // check line";
  const ir::Module input = ir::parse_module(text, GetParam().string());
  ir::verify(input);
  for (bool merge : {true, false}) {
    std::vector<const Check*> checks;
    for (const auto& c : header.checks) {
      if (std::count(c.merge_values.begin(), c.merge_values.end(), merge)) checks.push_back(&c);
    }
    if (checks.empty()) continue;
    SCOPED_TRACE(merge ? "pipeline with MergeCompilerRegions" : "pipeline without merging");
    Options options;
    options.merge = merge;
    std::optional<Stages> stages;
    std::string error;
    try {
      stages = run_passes(input, options);
    } catch (const PassError& e) {
      error = e.what();
    }
    for (const Check* c : checks) {
      SCOPED_TRACE("check on line " + std::to_string(c->line));
      if (c->what == "error") {
        ASSERT_FALSE(stages.has_value()) << "expected a PassError containing: " << c->argument;
        EXPECT_NE(error.find(c->argument), std::string::npos) << error;
        continue;
      }
      ASSERT_TRUE(stages.has_value()) << error;
      if (c->what == "kernels") {
        const KernelNames kernels(stages->output(), options.mod_name);
        std::vector<std::string> names;
        for (const auto& k : kernels.kernels()) names.push_back(k.name);
        EXPECT_EQ(names, split_words(c->argument));
        continue;
      }
      const ir::Module* actual = stages->find(c->what);
      ASSERT_NE(actual, nullptr) << "unknown stage " << c->what;
      const ir::Module expected = ir::parse_module(c->module_text, "expected " + c->what);
      EXPECT_TRUE(ir::structural_equal(expected, *actual))
          << "expected:\n"
          << ir::print_module(expected) << "actual:\n"
          << ir::print_module(*actual);
      EXPECT_EQ(global_param_names(expected), global_param_names(*actual));
    }
    // The reference passes (TVM's rules written independently of aot/) give the same modules,
    // parameter names included, and refuse exactly what the pipeline refuses.
    std::vector<std::pair<std::string, ir::Module>> reference_stages;
    std::string reference_error;
    try {
      ir::Module m = input;
      if (merge) reference_stages.emplace_back("merged", m = reference::merge_compiler_regions(m));
      reference_stages.emplace_back("partitioned", m = reference::partition_graph(m, "default"));
      reference_stages.emplace_back("fused", m = reference::fuse_ops(m));
    } catch (const reference::TvmRefuses& e) {
      reference_error = e.what();
    }
    ASSERT_EQ(stages.has_value(), reference_error.empty())
        << "pipeline: " << (stages ? "a module" : error) << "\nreference: "
        << (reference_error.empty() ? "a module" : reference_error);
    if (!stages) continue;
    for (const auto& [name, module] : reference_stages) {
      EXPECT_EQ(print_by_name(*stages->find(name)), print_by_name(module)) << name;
    }
  }
}

std::string test_name(const ::testing::TestParamInfo<fs::path>& info) {
  std::string name = info.param.stem().string();
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Corpus, Conformance, ::testing::ValuesIn(relay_files(kCorpus)), test_name);

TEST(ConformanceCorpus, HoldsTheSeedAndDesignGraphs) {
  // The #9036 graph with and without merging, and the project's own small cases, by file.
  for (const char* name :
       {"seed_9036_merge", "seed_9036_nomerge", "single_op", "end_on_tuple",
        "extern_feeds_fused_group", "merge_cycle_through_host_op", "cyclic_region_in_input"}) {
    EXPECT_TRUE(fs::exists(kCorpus / (std::string(name) + ".relay"))) << name;
  }
}

TEST(ConformanceCorpus, HoldsTheTvmTestDerivedGraphs) {
  // Each TVM test restated in the corpus, by file.
  for (const char* name :
       {"tvm_extern_ccompiler_default_ops", "tvm_extern_compiler_sanitized_ops",
        "tvm_extern_ccompiler_multiple_functions", "tvm_extern_ccompiler", "tvm_multiple_outputs",
        "tvm_mixed_single_multiple_outputs", "tvm_multiple_use_of_an_output_same_region",
        "tvm_multiple_use_of_an_output_different_region", "tvm_duplicate_outputs",
        "tvm_duplicate_merge_and_tuplegetitem", "tvm_flatten_tuple_output", "tvm_tuple_output_exec",
        "tvm_diamond_graph_fanouts", "tvm_example_graph", "tvm_name_sanitiser",
        "tvm_name_sanitiser_name_clash"}) {
    EXPECT_TRUE(fs::exists(kCorpus / (std::string(name) + ".relay"))) << name;
  }
}

}  // namespace
}  // namespace aotfuzz::aot

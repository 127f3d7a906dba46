// Unit tests for the TVM pytest writer: the files it writes compile with `python3 -m py_compile`
// and say what the repro needs (graph, merge, partition, AoT options).
#include <gtest/gtest.h>
#include <fstream>
#include <iterator>

#include "generator/builder.h"
#include "generator/policy.h"
#include "host/tempdir.h"
#include "tests/support/files.h"
#include "tests/support/modules.h"
#include "tests/support/processes.h"
#include "tvm/driver.h"
#include "tvm/pytest_export.h"

namespace aotfuzz::tvm {
namespace {

// py_compile on `sources`; "" when they all compile, else the diagnostics.
std::string py_compile(const std::vector<std::string>& sources) {
  host::TempDir dir("aotfuzz-pytest-test");
  std::vector<std::string> args{"-m", "py_compile"};
  for (std::size_t i = 0; i < sources.size(); ++i) {
    const std::string path = dir.file("test_repro_" + std::to_string(i) + ".py").string();
    std::ofstream(path, std::ios::binary) << sources[i];
    args.push_back(path);
  }
  auto r = test_support::python(args);
  if (r.exited_ok()) return "";
  return r.describe() + " " + r.message + "\n" + r.stderr_text;
}

std::size_t count(const std::string& text, const std::string& what) {
  std::size_t n = 0;
  for (auto pos = text.find(what); pos != std::string::npos; pos = text.find(what, pos + 1)) ++n;
  return n;
}

TEST(TvmPytest, SeedGraphBecomesACompilingTestInTheStyleOfTestByocMicrotvm) {
  ir::Module m = test_support::load("corpus/seed/tvm_9036_annotated.relay");
  oracle::CaseOptions o;
  PytestInfo info;
  info.name = "tvm_9036";
  info.notes = {"origin: TVM issue #9036"};
  const std::string py = tvm_pytest(m, o, info);
  EXPECT_EQ(py_compile({py}), "");
  EXPECT_NE(py.find("def test_aotfuzz_tvm_9036():"), std::string::npos);
  EXPECT_NE(py.find("# origin: TVM issue #9036"), std::string::npos);
  EXPECT_NE(py.find("MERGE_COMPILER_REGIONS = True"), std::string::npos);
  EXPECT_NE(py.find("transform.MergeCompilerRegions()(mod)"), std::string::npos);
  EXPECT_NE(py.find("transform.PartitionGraph(MOD_NAME)(mod)"), std::string::npos);
  EXPECT_NE(py.find("compile_and_run("), std::string::npos);
  EXPECT_NE(py.find("INTERFACE_API = \"packed\""), std::string::npos);
  EXPECT_NE(py.find("USE_UNPACKED_API = False"), std::string::npos);
  EXPECT_NE(py.find("relay.var(\"w1\", shape=(10, 10), dtype=\"float32\")"), std::string::npos);
  // Four begins, two ends; three adds in Relay and three in NumPy.
  EXPECT_EQ(count(py, "begin(x, \"ccompiler\")") + count(py, "begin(w0, \"ccompiler\")") +
                count(py, "begin(w1, \"ccompiler\")"),
            3u);
  EXPECT_EQ(count(py, " = begin("), 4u);
  EXPECT_EQ(count(py, " = end("), 2u);
  EXPECT_EQ(count(py, "relay.add("), 3u);
  EXPECT_EQ(count(py, "np.add("), 3u);
}

TEST(TvmPytest, OptionsSelectInterfaceApiAndMerging) {
  ir::Module m = test_support::load("corpus/seed/tvm_9036_annotated.relay");
  oracle::CaseOptions o;
  o.aot.merge = false;
  o.aot.mod_name = "my_mod";
  o.aot.api = aot::Options::Api::kUnpacked;
  o.aot.interface = aot::Options::Interface::kC;
  const std::string py = tvm_pytest(m, o);
  EXPECT_EQ(py_compile({py}), "");
  EXPECT_NE(py.find("MERGE_COMPILER_REGIONS = False"), std::string::npos);
  EXPECT_NE(py.find("MOD_NAME = \"my_mod\""), std::string::npos);
  EXPECT_NE(py.find("INTERFACE_API = \"c\""), std::string::npos);
  EXPECT_NE(py.find("USE_UNPACKED_API = True"), std::string::npos);
}

TEST(TvmPytest, TupleParametersAndAwkwardNamesStillCompile) {
  ir::Module m = test_support::parse_verified(R"(
def @main(%t: (Tensor[(2), float32], (Tensor[(2), float32], Tensor[(2), float32])), %v0: Tensor[(2), float32], %lambda: Tensor[(2), float32]) {
  %0 = %t.1;
  %1 = %0.0;
  %2 = annotation.compiler_begin(%1, compiler="my-target");
  %3 = annotation.compiler_begin(%v0, compiler="my-target");
  %4 = multiply(%2, %3);
  %5 = annotation.compiler_end(%4, compiler="my-target");
  %6 = subtract(%5, %lambda);
  (%6, %t.0)
})");
  const std::string py = tvm_pytest(m, oracle::CaseOptions{});
  EXPECT_EQ(py_compile({py}), "") << py;
  EXPECT_NE(py.find("relay.var(\"t_0\""), std::string::npos);
  EXPECT_NE(py.find("relay.var(\"t_2\""), std::string::npos);
  EXPECT_NE(py.find("relay.Tuple([t_0, relay.Tuple([t_1, t_2])])"), std::string::npos) << py;
  EXPECT_NE(py.find("relay.var(\"v0\""), std::string::npos);   // the name TVM sees is kept
  EXPECT_NE(py.find("in_v0 = relay.var"), std::string::npos);  // but not as a Python name
  EXPECT_NE(py.find("in_lambda = relay.var(\"lambda\""), std::string::npos);
  EXPECT_NE(py.find("relay.multiply("), std::string::npos);
  EXPECT_NE(py.find("\"my-target\""), std::string::npos);
}

TEST(TvmPytest, GeneratedGraphsAllCompile) {
  std::vector<std::string> sources;
  generator::GenPolicy policy;
  generator::set_knob(policy, "ops", "add:2,subtract:1,multiply:1");
  for (std::uint64_t seed = 1; seed <= 25; ++seed) {
    ir::Rng rng(seed);
    sources.push_back(
        tvm_pytest(generator::generate(generator::swarm(policy, rng), rng), oracle::CaseOptions{}));
  }
  EXPECT_EQ(py_compile(sources), "");
}

TEST(TvmPytest, NotesCarryNoPathOfThisMachine) {
  EXPECT_EQ(without_local_paths("replay: --sut tvm --tvm-home /root/.cache/aotfuzz/tvm/ab/tvm "
                                "--merge => arity:codegen:kernel"),
            "replay: --sut tvm --tvm-home \"$AOTFUZZ_TVM_HOME\" --merge => arity:codegen:kernel");
  EXPECT_EQ(without_local_paths("--tvm-fixed-home '/a b/tvm' --merge"),
            "--tvm-fixed-home \"$AOTFUZZ_TVM_HOME\" --merge");
  EXPECT_EQ(without_local_paths("replay: aotfuzz run /home/me/findings/x/reduced.relay --merge"),
            "replay: aotfuzz run reduced.relay --merge");
  EXPECT_EQ(without_local_paths("origin: aotfuzz fuzz --seed 5, case 3"),
            "origin: aotfuzz fuzz --seed 5, case 3");
  PytestInfo info;
  info.notes = {"replay: aotfuzz run /tmp/f/reduced.relay --sut tvm --tvm-home /opt/tvm --merge"};
  const std::string py =
      tvm_pytest(test_support::load("corpus/seed/tvm_9036_annotated.relay"), {}, info);
  EXPECT_EQ(py.find("/opt/tvm"), std::string::npos) << py;
  EXPECT_EQ(py.find("/tmp/f"), std::string::npos) << py;
}

// The seed graph with its regions for the driver's UMA backend instead of the ccompiler.
ir::Module uma_seed() {
  std::ifstream in(test_support::source_path("corpus/seed/tvm_9036_annotated.relay"));
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  for (auto at = text.find("ccompiler"); at != std::string::npos; at = text.find("ccompiler")) {
    text.replace(at, 9, "aotfuzz_uma");
  }
  return test_support::parse_verified(text);
}

TEST(TvmPytest, AGraphWithUmaRegionsDefinesTheDriversUmaBackendAndBuildsForItsTarget) {
  oracle::CaseOptions o;
  o.aot.api = aot::Options::Api::kUnpacked;
  o.aot.interface = aot::Options::Interface::kC;
  const std::string py = tvm_pytest(uma_seed(), o);
  EXPECT_EQ(py_compile({py}), "");
  EXPECT_NE(py.find("UMA_REGIONS = True"), std::string::npos);
  EXPECT_EQ(count(py, std::string(uma_backend_source())), 1u) << py;
  EXPECT_NE(py.find("targets.append(uma_target())"), std::string::npos);
  EXPECT_EQ(count(py, "begin(x, \"aotfuzz_uma\")"), 1u);
  // A TVM without UMA skips the test rather than failing on a codegen it does not have.
  EXPECT_NE(py.find("pytest.skip(\"aotfuzz_uma regions need UMA"), std::string::npos);

  const std::string ccompiler =
      tvm_pytest(test_support::load("corpus/seed/tvm_9036_annotated.relay"), o);
  EXPECT_NE(ccompiler.find("UMA_REGIONS = False"), std::string::npos);
  EXPECT_EQ(ccompiler.find("class AotfuzzUmaBackend"), std::string::npos);
}

TEST(TvmPytest, TheUmaBackendItCopiesIsTheDriversMarkedBlock) {
  const std::string block(uma_backend_source());
  EXPECT_EQ(block.rfind("# >>> aotfuzz_uma backend", 0), 0u) << block;
  EXPECT_NE(block.find("class AotfuzzUmaBackend(UMABackend):"), std::string::npos) << block;
  EXPECT_NE(block.find("def uma_target():"), std::string::npos) << block;
  EXPECT_NE(block.find("UMA_TARGET = \"" + std::string(kUmaTarget) + "\""), std::string::npos);
  EXPECT_EQ(block.substr(block.size() - 26), "# <<< aotfuzz_uma backend\n");
}

TEST(TvmPytest, ExpectedOutputsAreKeyedByTvmsOutputNamesWhereAotTestModelWantsADict) {
  // v0.18.0's AOTTestModel takes Dict[str, np.array]; a list failed in run_and_check.
  const std::string py =
      tvm_pytest(test_support::load("corpus/seed/tvm_9036_annotated.relay"), oracle::CaseOptions{});
  EXPECT_NE(py.find("outputs=named_outputs(expected)"), std::string::npos);
  EXPECT_NE(py.find("typing.get_type_hints(AOTTestModel).get(\"outputs\")"), std::string::npos);
}

TEST(TvmPytest, RejectsPartitionedModules) {
  ir::Module m = test_support::load("corpus/seed/tvm_9036_partitioned.relay");
  EXPECT_THROW(tvm_pytest(m, oracle::CaseOptions{}), PytestError);
}

}  // namespace
}  // namespace aotfuzz::tvm

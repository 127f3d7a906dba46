// `aotfuzz findings --rerun` when the environment, not the bug, decides: a TVM build that is gone
// or no C compiler is `cannot-run` (exit 3), never "fixed"; a result that cannot be recorded is
// still printed; triage refuses builds that are none, and a label given twice.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>

#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"

namespace aotfuzz::cli::test {
namespace {

namespace fs = std::filesystem;

const char* const kGraph = R"(def @main(%x: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  %2 = annotation.compiler_end(%1, compiler="ccompiler");
  add(%2, %x)
}
)";

// A bundle as campaigns write them, with one replay line.
fs::path write_bundle(const fs::path& findings, const std::string& name, const std::string& flags,
                      const std::string& signature, const std::string& graph = kGraph) {
  const fs::path dir = findings / name;
  fs::create_directories(dir);
  std::ofstream(dir / "reduced.relay") << "// replay: " << flags << " => " << signature << "\n"
                                       << graph;
  std::ofstream(dir / "verdict.json") << nlohmann::json{{"signature", signature}}.dump();
  std::ofstream(dir / "seen.json")
      << R"({"first_seen": 1, "last_seen": 2, "hits": 3, "campaigns": 1})";
  return dir;
}

nlohmann::json seen(const fs::path& bundle) {
  std::ifstream in(bundle / "seen.json");
  return nlohmann::json::parse(in);
}

TEST(FindingsRerun, ATvmBuildThatIsGoneIsCannotRunExit3AndNeverRecordedAsFixed) {
  host::TempDir dir("aotfuzz-cli-test");
  const fs::path bundle =
      write_bundle(dir.path(), "sut-error_codegen_TVMError",
                   "--sut tvm --tvm-home " + dir.file("gone").string() + " --merge",
                   "sut-error:codegen:TVMError");
  const host::RunResult r = run_aotfuzz({"findings", dir.path().string(), "--rerun"});
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("cannot-run"), std::string::npos) << r.stdout_text;
  EXPECT_EQ(r.stdout_text.find("fixed"), std::string::npos) << r.stdout_text;
  EXPECT_FALSE(seen(bundle).contains("rerun")) << seen(bundle).dump();
  const host::RunResult j = run_aotfuzz({"findings", dir.path().string(), "--rerun", "--json"});
  const auto listed = nlohmann::json::parse(j.stdout_text);
  EXPECT_FALSE(listed[0].contains("reproduces")) << listed.dump();
  EXPECT_FALSE(listed[0].value("cannot_run", "").empty()) << listed.dump();
}

TEST(FindingsRerun, NoCCompilerOnThePathIsCannotRunNotFixed) {
  host::TempDir dir("aotfuzz-cli-test");
  const fs::path bundle = write_bundle(dir.path(), "pass", "--merge --cc gcc", "pass");
  fs::create_directories(dir.file("empty-bin"));
  const host::RunResult r = run_aotfuzz({"findings", dir.path().string(), "--rerun"}, 120,
                                        {{"PATH", dir.file("empty-bin").string()}});
  EXPECT_EQ(r.exit_code, 3) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("cannot-run"), std::string::npos) << r.stdout_text;
  EXPECT_FALSE(seen(bundle).contains("rerun")) << seen(bundle).dump();
  // With the compiler back, the same bundle is judged and recorded.
  const host::RunResult again = run_aotfuzz({"findings", dir.path().string(), "--rerun"});
  EXPECT_EQ(again.exit_code, 1) << again.stdout_text << again.stderr_text;
  EXPECT_TRUE(seen(bundle).at("rerun").at("reproduces").get<bool>());
}

TEST(FindingsRerun, AResultThatCannotBeRecordedIsPrintedWithAWarning) {
  host::TempDir dir("aotfuzz-cli-test");
  std::ifstream seed(std::string(AOTFUZZ_SOURCE_DIR) + "/corpus/seed/tvm_9036_annotated.relay");
  const std::string seed_graph((std::istreambuf_iterator<char>(seed)),
                               std::istreambuf_iterator<char>());
  const fs::path bundle =
      write_bundle(dir.path(), "arity_codegen_kernel", "--inject tuple-arg-first-field --merge",
                   "arity:codegen:kernel", seed_graph);
  // seen.json cannot be replaced (a directory there): as on a read-only findings directory.
  fs::remove(bundle / "seen.json");
  fs::create_directories(bundle / "seen.json" / "x");
  const host::RunResult r = run_aotfuzz({"findings", dir.path().string(), "--rerun"});
  EXPECT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("yes"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("is not recorded"), std::string::npos) << r.stderr_text;
}

TEST(FindingsTriage, ALabelGivenTwiceAndADirectoryThatIsNoTvmBuildAreRefused) {
  host::TempDir dir("aotfuzz-cli-test");
  write_bundle(dir.path(), "pass", "--merge", "pass");
  const std::string fake = "tests/tvm/fake_tvm";
  expect_one_line_usage_error({"findings", dir.path().string(), "--rerun", "--tvm-build",
                               "a=" + fake, "--tvm-build", "a=" + fake},
                              "label 'a' given twice");
  fs::create_directories(dir.file("not-tvm"));
  expect_one_line_usage_error({"findings", dir.path().string(), "--rerun", "--tvm-build",
                               "x=" + dir.file("not-tvm").string()},
                              "python/tvm/__init__.py");
}

}  // namespace
}  // namespace aotfuzz::cli::test

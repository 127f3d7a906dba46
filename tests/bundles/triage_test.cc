// Triage across TVM builds (bundles/triage.h), on the fake TVM packages of tests/tvm: a bundle's
// first finding line replayed on each build gives one cell per build and the range of builds it
// reproduces on, recorded in its verdict.json.
#include "bundles/triage.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "bundles/bundle.h"
#include "fuzz/campaign.h"
#include "host/tempdir.h"
#include "report/html_report.h"
#include "systems/systems.h"
#include "tests/support/files.h"

namespace aotfuzz::bundles {
namespace {

namespace fs = std::filesystem;

const char* kGraph = R"(def @main(%x: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  annotation.compiler_end(%1, compiler="ccompiler")
}
)";

fs::path write_bundle(const fs::path& dir, const std::string& signature, const std::string& flags) {
  fs::create_directories(dir);
  std::ofstream(dir / "reduced.relay") << "// replay: " << flags << " => " << signature << "\n"
                                       << kGraph;
  std::ofstream(dir / "verdict.json") << nlohmann::json{{"signature", signature}}.dump();
  return dir;
}

TriageBuild fake(const std::string& label, const std::string& package) {
  return {label, test_support::source_path("tests/tvm/" + package)};
}

TEST(Triage, EachBuildIsACellAndTheRangeIsWhereTheSignatureReproduces) {
  host::TempDir dir("aotfuzz-triage-test");
  // The fake v0.8 TVM answers this module name as a TVM without LLVM does (a toolchain error);
  // the fake v0.18 raises a TVM error at build, the bundle's signature.
  write_bundle(dir.file("sut-error_codegen_TVMError"), "sut-error:codegen:TVMError",
               "--sut tvm --mod-name no_llvm --merge");
  write_bundle(dir.file("arity_codegen_kernel"), "arity:codegen:kernel",
               "--inject tuple-arg-first-field --merge");
  const auto bundles = list_bundles(dir.path());
  ASSERT_EQ(bundles.size(), 2u);
  Triage triage({fake("v0.8", "fake_tvm"), fake("v0.18", "fake_tvm_v018"),
                 fake("broken", "fake_tvm_broken")});
  std::vector<std::optional<TriageRow>> rows;
  for (const auto& b : bundles) rows.push_back(triage.row(b));
  const std::size_t tvm = bundles[0].signature == "arity:codegen:kernel" ? 1 : 0;
  EXPECT_FALSE(rows[1 - tvm]) << "a builtin finding has no TVM row";
  ASSERT_TRUE(rows[tvm]);
  const TriageRow& row = *rows[tvm];
  ASSERT_EQ(row.cells.size(), 3u);
  EXPECT_EQ(row.cells[0].outcome, TriageOutcome::kCannotRun) << row.cells[0].signature;
  EXPECT_EQ(row.cells[1].outcome, TriageOutcome::kReproduces) << row.cells[1].signature;
  EXPECT_EQ(row.cells[2].outcome, TriageOutcome::kCannotRun) << row.cells[2].signature;
  EXPECT_EQ(row.first, "v0.18");
  EXPECT_EQ(row.last, "v0.18");

  record_triage(bundles[tvm], row);
  const auto j = nlohmann::json::parse(read_text_file(bundles[tvm].dir / "verdict.json"));
  EXPECT_EQ(j.at("signature"), "sut-error:codegen:TVMError");
  EXPECT_EQ(j.at("triage").at("first_reproducing"), "v0.18");
  EXPECT_EQ(j.at("triage").at("builds")[1].at("outcome"), "reproduces");

  // Read back with the bundle, it is in findings --json and on the report's page.
  const auto listed = list_bundles(dir.path());
  const auto& again = listed[tvm];
  EXPECT_EQ(to_json(listed)[tvm].at("triage").at("last_reproducing"), "v0.18");
  report::ReportInput input;
  input.bundles.push_back({again, ""});
  const std::string page = report::render_report(input);
  EXPECT_NE(page.find("v0.18 reproduces"), std::string::npos);
  EXPECT_NE(page.find("(reproduces on v0.18)"), std::string::npos);

  const std::string table = triage_table(bundles, rows, triage.builds());
  EXPECT_NE(table.find("cannot-run  reproduces"), std::string::npos) << table;
  EXPECT_NE(table.find("(not a TVM finding)"), std::string::npos) << table;
}

TEST(Triage, AReleaseWithoutOneOfTheCasesOptionsCannotRunItRatherThanPassIt) {
  host::TempDir dir("aotfuzz-triage-test");
  write_bundle(dir.file("sut-error_codegen_TVMError"), "sut-error:codegen:TVMError",
               "--sut tvm --merge --usmp on --api unpacked --interface c");
  const auto bundles = list_bundles(dir.path());
  ASSERT_EQ(bundles.size(), 1u);
  // The fake v0.8 has no USMP: built without it, the case would be another one.
  Triage triage({fake("v0.8", "fake_tvm")});
  const auto row = triage.row(bundles[0]);
  ASSERT_TRUE(row);
  ASSERT_EQ(row->cells.size(), 1u);
  EXPECT_EQ(row->cells[0].outcome, TriageOutcome::kCannotRun) << row->cells[0].summary;
  EXPECT_NE(row->cells[0].summary.find("has no --usmp on: it came in v0.9.0"), std::string::npos)
      << row->cells[0].summary;
}

TEST(Triage, ACampaignTriagesEachNewFindingOnItsBuildsAndRecordsTheRow) {
  host::TempDir dir("aotfuzz-triage-campaign-test");
  fuzz::CampaignOptions o;
  o.seed = 4;
  o.max_cases = 2;
  o.jobs = 1;
  o.reduce = false;
  o.findings_dir = dir.file("findings");
  // The fake v0.18 raises a TVM error at build for every graph; the fake v0.8 answers this
  // module name as a TVM without LLVM does.
  o.base.sut = systems::make_system(
      {"tvm", test_support::source_path("tests/tvm/fake_tvm_v018").string(), ""});
  o.base.aot.mod_name = "no_llvm";
  o.triage_builds = {fake("v0.8", "fake_tvm"), fake("v0.18", "fake_tvm_v018")};
  const fuzz::CampaignResult r = run_campaign(o);
  ASSERT_EQ(r.findings.size(), 1u);
  EXPECT_EQ(r.findings[0].signature, "sut-error:codegen:TVMError");
  const auto j =
      nlohmann::json::parse(read_text_file(fs::path(r.findings[0].bundle_dir) / "verdict.json"));
  const auto& cells = j.at("triage").at("builds");
  ASSERT_EQ(cells.size(), 2u) << j.dump();
  EXPECT_EQ(cells[0].at("outcome"), "cannot-run") << j.dump();
  EXPECT_EQ(cells[1].at("outcome"), "reproduces") << j.dump();
  EXPECT_EQ(j.at("triage").at("first_reproducing"), "v0.18");
}

TEST(Triage, BuildsAreLabelEqualsDirOrLinesOfAFile) {
  const TriageBuild b = parse_triage_build("v0.8.0=/opt/tvm-0.8");
  EXPECT_EQ(b.label, "v0.8.0");
  EXPECT_EQ(b.home, "/opt/tvm-0.8");
  EXPECT_THROW(parse_triage_build("/opt/tvm"), std::invalid_argument);
  const auto builds =
      parse_triage_builds_file("# oldest first\npre9064 /a\n\nv0.18.0 /b  # last\n", "b.txt");
  ASSERT_EQ(builds.size(), 2u);
  EXPECT_EQ(builds[1].label, "v0.18.0");
  EXPECT_EQ(builds[1].home, "/b");
  try {
    parse_triage_builds_file("a /x\na /y\n", "b.txt");
    ADD_FAILURE() << "a repeated label";
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()).rfind("b.txt:2:", 0), 0u) << e.what();
  }
  EXPECT_THROW(parse_triage_builds_file("# nothing\n", "b.txt"), std::invalid_argument);
}

}  // namespace
}  // namespace aotfuzz::bundles

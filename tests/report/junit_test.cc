// Unit tests for the JUnit XML report: escaping, totals, and well-formedness as judged by an XML
// parser (Python's xml.dom.minidom).
#include <gtest/gtest.h>
#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>

#include "host/tempdir.h"
#include "report/junit.h"
#include "report/junit_suites.h"
#include "tests/support/processes.h"

namespace aotfuzz::report {
namespace {

TEST(JUnit, EscapesMarkupQuotesAndForbiddenCharacters) {
  EXPECT_EQ(xml_escape("a<b>&\"c'"), "a&lt;b&gt;&amp;&quot;c&apos;");
  EXPECT_EQ(xml_escape(std::string("x\x01y\tz\n", 6)), "x?y\tz\n");
  EXPECT_EQ(xml_escape("\xff"), "?");
  EXPECT_EQ(xml_escape("\xc3\xa9"), "\xc3\xa9");  // é stays
}

TEST(JUnit, ReportIsWellFormedXmlWithTheRightTotals) {
  JUnitSuite replay;
  replay.name = "replay";
  replay.cases.push_back({"corpus.conformance", "ok.relay", 0.25, false, "", "", ""});
  replay.cases.push_back({"corpus.regressions", "bad<&>.relay", 0.5, true,
                          "expected \"pass\", got <arity>", "replay: aotfuzz run x --merge\n\x02",
                          "'--merge' => arity:codegen:kernel\n"});
  JUnitSuite fuzz;
  fuzz.name = "fuzz";
  fuzz.cases.push_back({"fuzz", "fuzz shard 0/1 (seed 9036)", 60, false, "", "", "summary"});
  const std::string xml = junit_xml({replay, fuzz});
  host::TempDir dir("aotfuzz-junit-test");
  const std::string path = dir.file("report.xml").string();
  std::ofstream(path) << xml;
  auto r = test_support::python(
      {"-c",
       "import sys, xml.dom.minidom as m\n"
       "d = m.parse(sys.argv[1])\n"
       "top = d.documentElement\n"
       "cases = d.getElementsByTagName('testcase')\n"
       "fails = d.getElementsByTagName('failure')\n"
       "print(top.tagName, top.getAttribute('tests'), top.getAttribute('failures'), len(cases),"
       " len(fails), fails[0].getAttribute('message'))\n",
       path});
  ASSERT_TRUE(r.exited_ok()) << r.describe() << r.message << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "testsuites 3 1 3 1 expected \"pass\", got <arity>\n");
}

TEST(JUnit, EnvironmentFailuresAreErrorsAndInterruptedFilesAreSkippedNotFailures) {
  bundles::FileReplay no_compiler;
  no_compiler.path = "corpus/seed/a.relay";
  bundles::ReplayRun run{bundles::ReplayLine{2, "--merge", "pass"},
                          "toolchain-error:run",
                          "toolchain-error at run: no C compiler found",
                          false,
                          {}};
  run.environment = true;
  no_compiler.runs.push_back(run);
  bundles::FileReplay not_run;
  not_run.path = "corpus/seed/b.relay";
  not_run.interrupted = true;
  const JUnitSuite suite = replay_suite({no_compiler, not_run});
  ASSERT_EQ(suite.cases.size(), 2u);
  EXPECT_FALSE(suite.cases[0].failed);
  EXPECT_TRUE(suite.cases[0].error);
  EXPECT_NE(suite.cases[0].message.find("no C compiler found"), std::string::npos);
  EXPECT_FALSE(suite.cases[1].failed);
  EXPECT_TRUE(suite.cases[1].skipped);
  const std::string xml = junit_xml({suite});
  EXPECT_NE(xml.find("failures=\"0\" errors=\"1\" skipped=\"1\""), std::string::npos) << xml;
  EXPECT_NE(xml.find("<error message=\"could not run"), std::string::npos) << xml;
  EXPECT_NE(xml.find("<skipped message=\"interrupted"), std::string::npos) << xml;
  EXPECT_EQ(xml.find("<failure"), std::string::npos) << xml;
  EXPECT_EQ(replay_status_line(no_compiler).rfind("ERROR ", 0), 0u);
}

TEST(JUnit, ReplaySuiteHasOneCasePerFileNamedByDirectory) {
  bundles::FileReplay ok;
  ok.path = "corpus/conformance/single_op.relay";
  ok.runs.push_back({bundles::ReplayLine{0, "--merge", "pass"}, "pass:run", "pass", true, {}});
  bundles::FileReplay bad;
  bad.path = "corpus/regressions/x.relay";
  bad.runs.push_back({bundles::ReplayLine{3, "--no-merge", "pass"},
                      "arity:codegen:kernel",
                      "arity ...",
                      false,
                      {}});
  auto suite = replay_suite({ok, bad});
  ASSERT_EQ(suite.cases.size(), 2u);
  EXPECT_EQ(suite.cases[0].classname, "corpus.conformance");
  EXPECT_EQ(suite.cases[0].name, "single_op.relay");
  EXPECT_FALSE(suite.cases[0].failed);
  EXPECT_TRUE(suite.cases[1].failed);
  EXPECT_NE(suite.cases[1].details.find("aotfuzz run corpus/regressions/x.relay --no-merge"),
            std::string::npos);
}

TEST(JUnit, AShardOutcomeSurvivesItsJsonHandOffFromTheSupervisedChild) {
  fuzz::CampaignResult r;
  r.elapsed = std::chrono::milliseconds(1500);
  r.stats.cases = 40;
  fuzz::Finding f;
  f.signature = "crash:fuse:SIGSEGV";
  f.case_index = 7;
  f.summary = "crash at fuse: SIGSEGV \"in\" the harness's process";
  f.replay = "aotfuzz run 'a b/reduced.relay' --merge";
  f.bundle_dir = "a b";
  f.bundle_written = true;
  r.findings.push_back(f);
  fuzz::CampaignOptions o;
  o.seed = 3;
  const ShardOutcome sent = shard_outcome(r, o);
  EXPECT_TRUE(sent.junit.failed);
  EXPECT_EQ(sent.exit_code, 1);
  const ShardOutcome got = shard_outcome_from_json(nlohmann::json::parse(to_json(sent).dump()));
  EXPECT_EQ(got.junit.name, sent.junit.name);
  EXPECT_EQ(got.junit.classname, sent.junit.classname);
  EXPECT_EQ(got.junit.seconds, sent.junit.seconds);
  EXPECT_EQ(got.junit.failed, sent.junit.failed);
  EXPECT_EQ(got.junit.message, sent.junit.message);
  EXPECT_EQ(got.junit.details, sent.junit.details);
  EXPECT_EQ(got.junit.output, sent.junit.output);
  EXPECT_EQ(got.exit_code, 1);
  ASSERT_EQ(got.findings.size(), 1u);
  EXPECT_EQ(got.findings[0].signature, f.signature);
  EXPECT_EQ(got.findings[0].case_index, 7u);
  EXPECT_EQ(got.findings[0].summary, f.summary);
  EXPECT_EQ(got.findings[0].replay, f.replay);
  EXPECT_EQ(got.findings[0].bundle_dir, f.bundle_dir);
  EXPECT_TRUE(got.findings[0].bundle_written);
  // A truncated hand-off is refused, not half read.
  EXPECT_THROW(shard_outcome_from_json(nlohmann::json::parse(R"({"junit": {}})")),
               nlohmann::json::exception);
}

}  // namespace
}  // namespace aotfuzz::report

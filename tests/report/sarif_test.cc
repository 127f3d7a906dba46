// SARIF logs (report/sarif.h): what a result says and where it points. The schema check of a whole
// log is tests/report/validate_sarif.py.
#include "report/sarif.h"

#include <gtest/gtest.h>

#include <filesystem>

namespace aotfuzz::report {
namespace {

TEST(Sarif, ACampaignFindingPointsAtItsReducedGraphAndEndsWithItsReplayCommand) {
  fuzz::Finding f;
  f.signature = "structure:fuse";
  f.summary = "structure at fuse: the module differs from what TVM v0.8's rules give";
  f.replay = "aotfuzz run 'my findings/structure_fuse/reduced.relay' --merge";
  f.bundle_dir = "my findings/structure_fuse";
  f.bundle_written = true;
  const auto log = sarif_log("1.2.3", {}, {f}, std::filesystem::current_path().string());
  EXPECT_EQ(log.at("version"), "2.1.0");
  const auto& run = log.at("runs").at(0);
  EXPECT_EQ(run.at("tool").at("driver").at("version"), "1.2.3");
  ASSERT_EQ(run.at("results").size(), 1u);
  const auto& r = run.at("results").at(0);
  EXPECT_EQ(r.at("ruleId"), "structure:fuse");
  EXPECT_EQ(r.at("locations").at(0).at("physicalLocation").at("artifactLocation").at("uri"),
            "my%20findings/structure_fuse/reduced.relay");
  const std::string text = r.at("message").at("text");
  EXPECT_EQ(text.substr(text.size() - f.replay.size()), f.replay);
  EXPECT_EQ(run.at("tool").at("driver").at("rules").at(0).at("id"), "structure:fuse");
}

TEST(Sarif, PathsUnderTheRootAreRelativeToItAndOthersAreAbsoluteFileUris) {
  fuzz::Finding inside;
  inside.signature = "crash:fuse:SIGSEGV";
  inside.summary = "crash at fuse: SIGSEGV";
  inside.bundle_dir = "/runner/work/repo/findings/crash_fuse_SIGSEGV";
  inside.bundle_written = true;
  fuzz::Finding outside = inside;
  outside.bundle_dir = "/tmp/findings/crash_fuse_SIGSEGV";
  const auto log = sarif_log("1", {}, {inside, outside}, "/runner/work/repo");
  const auto& results = log.at("runs").at(0).at("results");
  ASSERT_EQ(results.size(), 2u);
  const auto& in =
      results.at(0).at("locations").at(0).at("physicalLocation").at("artifactLocation");
  EXPECT_EQ(in.at("uri"), "findings/crash_fuse_SIGSEGV/reduced.relay");
  EXPECT_EQ(in.at("uriBaseId"), "%SRCROOT%");
  const auto& out =
      results.at(1).at("locations").at(0).at("physicalLocation").at("artifactLocation");
  EXPECT_EQ(out.at("uri"), "file:///tmp/findings/crash_fuse_SIGSEGV/reduced.relay");
  EXPECT_FALSE(out.contains("uriBaseId"));
}

TEST(Sarif, ACrashFindingsMessageSaysWhatCrashedWhere) {
  fuzz::Finding f;
  f.signature = "crash:fuse:SIGSEGV";
  f.replay = "aotfuzz run reduced.relay --debug-fault fuse:crash";
  f.summary = "crash at fuse: SIGSEGV";
  const std::string text =
      sarif_log("1", {}, {f}).at("runs").at(0).at("results").at(0).at("message").at("text");
  EXPECT_EQ(text.rfind("crash at fuse: SIGSEGV. Replay: ", 0), 0u) << text;
  // A finding that lost its summary still names its signature, never an empty message.
  f.summary.clear();
  const std::string bare =
      sarif_log("1", {}, {f}).at("runs").at(0).at("results").at(0).at("message").at("text");
  EXPECT_EQ(bare.rfind("crash:fuse:SIGSEGV. Replay: ", 0), 0u) << bare;
}

TEST(Sarif, ALineTheEnvironmentCouldNotRunIsNoResult) {
  bundles::FileReplay file;
  file.path = "corpus/x.relay";
  bundles::ReplayRun run;
  run.actual = "toolchain-error:run";
  run.environment = true;
  file.runs.push_back(run);
  EXPECT_TRUE(sarif_log("1", {file}).at("runs").at(0).at("results").empty());
}

TEST(Sarif, PassingReplaysGiveNoResult) {
  bundles::FileReplay ok;
  ok.path = "corpus/x.relay";
  bundles::ReplayRun run;
  run.ok = true;
  run.actual = "pass:run";
  ok.runs.push_back(run);
  EXPECT_TRUE(sarif_log("1", {ok}).at("runs").at(0).at("results").empty());
}

}  // namespace
}  // namespace aotfuzz::report

// SARIF logs (fuzz/sarif.h): what a result says and where it points. The schema check of a whole
// log is tests/fuzz/validate_sarif.py.
#include "fuzz/sarif.h"

#include <gtest/gtest.h>

namespace aotfuzz::fuzz {
namespace {

TEST(Sarif, ACampaignFindingPointsAtItsReducedGraphAndEndsWithItsReplayCommand) {
  Finding f;
  f.signature = "structure:fuse";
  f.summary = "structure at fuse: the module differs from what TVM v0.8's rules give";
  f.replay = "aotfuzz run 'my findings/structure_fuse/reduced.relay' --merge";
  f.bundle_dir = "my findings/structure_fuse";
  f.bundle_written = true;
  const auto log = sarif_log("1.2.3", {}, {f});
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

TEST(Sarif, PassingReplaysGiveNoResult) {
  FileReplay ok;
  ok.path = "corpus/x.relay";
  ReplayRun run;
  run.ok = true;
  run.actual = "pass:run";
  ok.runs.push_back(run);
  EXPECT_TRUE(sarif_log("1", {ok}).at("runs").at(0).at("results").empty());
}

}  // namespace
}  // namespace aotfuzz::fuzz

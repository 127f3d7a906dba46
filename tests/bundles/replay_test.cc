// Unit tests for replay lines: their syntax, the flags they carry (the same as `aotfuzz run`),
// signature matching, and replaying files against them.
#include <gtest/gtest.h>
#include <fstream>

#include "bundles/replay.h"
#include "host/tempdir.h"
#include "oracle/oracle.h"
#include "report/junit_suites.h"
#include "tests/support/files.h"

namespace aotfuzz::bundles {
namespace {

constexpr const char* kGraph = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(3), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  annotation.compiler_end(%1, compiler="ccompiler")
}
)";

std::string write_temp(const host::TempDir& dir, const std::string& name, const std::string& text) {
  const std::string path = dir.file(name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

TEST(ReplayLines, ParseFlagsAndExpectedSignatureFromTheHeader) {
  const std::string text = std::string("// origin: test\n") +
                           "// replay: --no-merge --api unpacked => pass\n" +
                           "//replay-like comment that is not a marker\n" +
                           "// replay: => arity:codegen:kernel\n" + kGraph;
  auto lines = parse_replay_lines(text, "f.relay");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0].line, 2);
  EXPECT_EQ(lines[0].flags, "--no-merge --api unpacked");
  EXPECT_EQ(lines[0].expected, "pass");
  EXPECT_EQ(lines[1].line, 4);
  EXPECT_EQ(lines[1].flags, "");
  EXPECT_EQ(lines[1].expected, "arity:codegen:kernel");
}

TEST(ReplayLines, OnlyTheHeaderBeforeTheModuleCounts) {
  const std::string text = std::string(kGraph) + "// replay: --no-merge => crash\n";
  EXPECT_TRUE(parse_replay_lines(text, "f.relay").empty());
}

TEST(ReplayLines, MalformedLinesAreErrorsNamingFileAndLine) {
  try {
    parse_replay_lines("// origin: x\n// replay: --merge pass\n", "bad.relay");
    FAIL() << "no error";
  } catch (const ReplayError& e) {
    EXPECT_NE(std::string(e.what()).find("bad.relay:2:"), std::string::npos) << e.what();
  }
  EXPECT_THROW(parse_replay_lines("// replay: --merge =>\n", "f"), ReplayError);
  EXPECT_THROW(parse_replay_lines("// replay: --bogus => pass\n", "f"), ReplayError);
  EXPECT_THROW(parse_replay_lines("// replay: --inject no-such-bug => pass\n", "f"), ReplayError);
}

TEST(ReplayLines, BothHalvesOfAPairAnUnknownVerdictKindAndANearMissMarkerAreErrors) {
  const std::string graph = "def @main(%x: Tensor[(2), float32]) {\n  add(%x, %x)\n}\n";
  const auto error_of = [&](const std::string& header) -> std::string {
    try {
      parse_replay_lines(header + "\n" + graph, "f.relay");
    } catch (const ReplayError& e) {
      return e.what();
    }
    return "";
  };
  EXPECT_NE(error_of("// replay: --merge --no-merge => pass").find("f.relay:1: "),
            std::string::npos);
  EXPECT_NE(error_of("// replay: --no-merge --merge => pass").find("--merge and --no-merge"),
            std::string::npos);
  EXPECT_NE(error_of("// replay: --merge => bogus:codegen").find("'bogus' is no verdict kind"),
            std::string::npos);
  for (const char* near : {"//replay: --merge => pass", "// Replay: --merge => pass",
                           "//  replay : --merge => pass"}) {
    EXPECT_NE(error_of(std::string("// a comment\n") + near).find("f.relay:2: "), std::string::npos)
        << near;
  }
  // The same flag twice the same way, and comments that merely mention replaying, are fine.
  EXPECT_EQ(error_of("// replay: --merge --merge => pass"), "");
  EXPECT_EQ(error_of("// replayed by hand on 2026-12-01"), "");
  EXPECT_EQ(error_of("// replay: --merge => arity:codegen:kernel"), "");
}

TEST(ReplayLines, FormatParsesBack) {
  const std::string line =
      format_replay_line("--no-merge --inject tuple-arg-first-field", "arity:codegen:kernel");
  auto lines = parse_replay_lines(line + "\n", "f");
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].flags, "--no-merge --inject tuple-arg-first-field");
  EXPECT_EQ(lines[0].expected, "arity:codegen:kernel");
  EXPECT_EQ(parse_replay_lines(format_replay_line("", "pass") + "\n", "f").at(0).flags, "");
}

TEST(SignatureMatching, AcceptsEqualityAndPrefixesEndingAtAColon) {
  EXPECT_TRUE(signature_matches("pass", "pass:run"));
  EXPECT_TRUE(signature_matches("invalid-input", "invalid-input:merge"));
  EXPECT_TRUE(signature_matches("arity:codegen:kernel", "arity:codegen:kernel"));
  EXPECT_TRUE(signature_matches("crash:run", "crash:run:kernel:SIGSEGV"));
  EXPECT_FALSE(signature_matches("arity:codegen:kernel", "arity:codegen:external"));
  EXPECT_FALSE(signature_matches("pass:run", "pass"));
  EXPECT_FALSE(signature_matches("arity:code", "arity:codegen:kernel"));
  EXPECT_FALSE(signature_matches("pass", "mismatch:codegen"));
}

TEST(Replay, FileWithoutReplayLinesMustPassWithAndWithoutMerge) {
  host::TempDir dir("aotfuzz-replay-test");
  auto r = replay_file(write_temp(dir, "plain.relay", std::string("// origin: test\n") + kGraph));
  EXPECT_TRUE(r.ok()) << r.failure_text();
  ASSERT_EQ(r.runs.size(), 2u);
  EXPECT_EQ(r.runs[0].line.flags, "--merge");
  EXPECT_EQ(r.runs[1].line.flags, "--no-merge");
  EXPECT_EQ(r.runs[0].actual, "pass:run");
}

TEST(Replay, UnmetExpectationFailsAndSaysHowToReplayIt) {
  host::TempDir dir("aotfuzz-replay-test");
  const std::string path = write_temp(
      dir, "wrong.relay", std::string("// replay: --no-merge => mismatch:codegen\n") + kGraph);
  auto r = replay_file(path);
  EXPECT_FALSE(r.ok());
  ASSERT_EQ(r.runs.size(), 1u);
  EXPECT_EQ(r.runs[0].actual, "pass:run");
  const std::string text = r.failure_text();
  EXPECT_NE(text.find("expected mismatch:codegen, got pass:run"), std::string::npos) << text;
  EXPECT_NE(text.find("aotfuzz run " + path + " --no-merge"), std::string::npos) << text;
}

TEST(Replay, InjectedBugLineAndFixedPipelineLineBothHold) {
  host::TempDir dir("aotfuzz-replay-test");
  const std::string text =
      "// replay: --merge --inject tuple-arg-first-field => arity:codegen:kernel\n"
      "// replay: --merge => pass\n" +
      test_support::read_text(test_support::source_path("corpus/seed/tvm_9036_annotated.relay"));
  auto r = replay_file(write_temp(dir, "seed.relay", text));
  EXPECT_TRUE(r.ok()) << r.failure_text();
  EXPECT_EQ(r.runs.size(), 2u);
}

TEST(Replay, WithNoRunALineThatNeedsTheCompiledProgramIsUncheckedNotFailed) {
  const std::string text =
      "// replay: --merge => compile-error:codegen\n"
      "// replay: --merge => pass\n" +
      test_support::read_text(test_support::source_path("corpus/seed/tvm_9036_annotated.relay"));
  ReplayOverride no_run;
  no_run.no_run = true;
  const auto r = replay_text(text, "seed.relay", no_run);
  ASSERT_TRUE(r.ok()) << r.failure_text();
  EXPECT_TRUE(r.runs.at(0).unchecked) << r.runs.at(0).summary;
  EXPECT_FALSE(r.runs.at(1).unchecked);
  EXPECT_NE(report::replay_status_line(r).find("1 not checked with --no-run"), std::string::npos);
  // Compiled, the same line is judged (and fails: the graph compiles and passes).
  EXPECT_FALSE(replay_text(text, "seed.relay").ok());
  EXPECT_TRUE(needs_program("compile-error:codegen"));
  EXPECT_TRUE(needs_program("crash:run:SIGSEGV"));
  EXPECT_FALSE(needs_program("crash:merge:SIGSEGV"));
  EXPECT_FALSE(needs_program("fidelity:partition"));
}

TEST(Replay, TextThatDoesNotParseIsJudgedAsInvalidInput) {
  auto ok = replay_text("// replay: => invalid-input\ndef @main( {", "broken.relay");
  EXPECT_TRUE(ok.ok()) << ok.failure_text();
  auto bad = replay_text("// origin: x\ndef @main( {", "broken.relay");
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.runs.at(0).actual, "invalid-input:annotated");
}

TEST(Replay, CollectsRelayFilesOfDirectoriesSortedAndRejectsMissingPaths) {
  host::TempDir dir("aotfuzz-replay-test");
  std::filesystem::create_directory(dir.file("sub"));
  write_temp(dir, "sub/b.relay", kGraph);
  write_temp(dir, "a.relay", kGraph);
  write_temp(dir, "notes.txt", "x");
  auto files = collect_relay_files({dir.path().string()});
  ASSERT_EQ(files.size(), 2u);
  EXPECT_EQ(files[0], dir.file("a.relay").string());
  EXPECT_EQ(files[1], dir.file("sub/b.relay").string());
  EXPECT_THROW(collect_relay_files({dir.file("missing").string()}), ReplayError);
}

}  // namespace
}  // namespace aotfuzz::bundles

// `aotfuzz merge` as a user runs it: bad sources and a busy target refused with one line and
// exit 2, the summary line, the SARIF log. Findings directories laid out by hand (fast).
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"
#include "tests/support/files.h"

namespace aotfuzz::cli::test {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using test_support::read_text;
using test_support::write_file;

// A findings directory with one bundle of `signature`.
fs::path findings_dir(const fs::path& dir, const std::string& signature, int hits) {
  const fs::path b = dir / "arity_codegen_kernel";
  fs::create_directories(b);
  write_file(b / "original.relay", "def @main(%x: Tensor[(2), float32]) { add(%x, %x) }\n");
  write_file(b / "reduced.relay", "def @main(%x: Tensor[(2), float32]) { %x }\n");
  write_file(b / "verdict.json",
             json{{"signature", signature},
                  {"flags", "--merge"},
                  {"replay", "aotfuzz run x --merge"},
                  {"verdict", {{"summary", "arity at codegen"}}},
                  {"info", {{"reduction", {{"after", {{"ops", 0}}}}}}}}
                 .dump(2));
  write_file(b / "seen.json",
             json{{"first_seen", 10}, {"last_seen", 20}, {"hits", hits}, {"campaigns", 1}}.dump());
  return dir;
}

TEST(Merge, MergesTheSourcesAndSaysWhatItDid) {
  host::TempDir t("aotfuzz-cli-merge");
  const fs::path a = findings_dir(t.file("a"), "arity:codegen:kernel", 2);
  const fs::path b = findings_dir(t.file("b"), "arity:codegen:kernel", 3);
  const fs::path out = t.file("out");
  const fs::path sarif = t.file("merged.sarif");

  const auto r = run_aotfuzz({"merge", "--into", out.string(), a.string(), b.string(), "--sarif",
                              sarif.string()});

  EXPECT_EQ(r.exit_code, 0) << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("1 signatures (1 new"), std::string::npos) << r.stdout_text;
  EXPECT_EQ(json::parse(read_text(out / "arity_codegen_kernel" / "seen.json")).at("hits"), 5);
  EXPECT_TRUE(fs::exists(out / "report.html"));
  const json log = json::parse(read_text(sarif));
  ASSERT_EQ(log.at("runs").at(0).at("results").size(), 1u) << log.dump(2);
  EXPECT_EQ(log["runs"][0]["results"][0]["properties"]["signature"], "arity:codegen:kernel");

  const auto again = run_aotfuzz({"merge", "--into", out.string(), a.string(), b.string()});
  EXPECT_EQ(again.exit_code, 0) << again.stderr_text;
  EXPECT_NE(again.stdout_text.find("nothing changed"), std::string::npos) << again.stdout_text;
}

TEST(Merge, BadSourcesAreRefusedWithOneLineAndExit2) {
  host::TempDir t("aotfuzz-cli-merge");
  const fs::path a = findings_dir(t.file("a"), "arity:codegen:kernel", 1);
  const fs::path other_a = findings_dir(t.file("x") / "a", "arity:codegen:kernel", 1);
  fs::create_directories(t.file("empty"));
  const std::string out = t.file("out").string();
  expect_one_line_usage_error({"merge", "--into", out, t.file("missing").string()}, "missing");
  expect_one_line_usage_error({"merge", "--into", out, t.file("empty").string()},
                              "not a findings directory");
  expect_one_line_usage_error({"merge", "--into", a.string(), a.string()}, "also a source");
  expect_one_line_usage_error({"merge", "--into", out, a.string(), other_a.string()},
                              "two sources are named a");
  expect_one_line_usage_error({"merge", a.string()}, "--into");
  EXPECT_FALSE(fs::exists(out));
}

TEST(Merge, ATargetAnotherMergeIsWritingIsRefusedWithOneLine) {
  host::TempDir t("aotfuzz-cli-merge");
  const fs::path a = findings_dir(t.file("a"), "arity:codegen:kernel", 1);
  const fs::path out = t.file("out");
  fs::create_directories(out);
  const int fd = ::open((out / ".merge.lock").c_str(), O_CREAT | O_RDWR | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(::flock(fd, LOCK_EX | LOCK_NB), 0);
  expect_one_line_usage_error({"merge", "--into", out.string(), a.string()}, "another merge");
  EXPECT_FALSE(fs::exists(out / "arity_codegen_kernel"));
  ::close(fd);
}

}  // namespace
}  // namespace aotfuzz::cli::test

// `aotfuzz bisect` (cli/cmd_bisect.cc) on a TVM history made by the test: a git repository whose
// commits change a fake TVM package (tests/tvm/fake_tvm, plus a switch that makes its
// MergeCompilerRegions refuse every graph: the finding), with a dlpack submodule taken from a
// mirror, and a fake build script (tests/cli/fake_tvm_build.sh) that copies a tree, fails on a
// tree marked BROKEN_BUILD, and counts its calls. Each test runs in a second or two.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "host/process.h"
#include "host/tempdir.h"
#include "tests/cli/run_aotfuzz.h"
#include "tests/support/files.h"

namespace aotfuzz::cli::test {
namespace {

namespace fs = std::filesystem;
using test_support::read_text;
using test_support::write_file;

// The graph of every test, and its finding with the fake TVM: with --no-run the driver only
// partitions, and the fake's MergeCompilerRegions raises when merge_rules.py says REFUSES.
const char* kGraph = R"(def @main(%x: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %0);
  annotation.compiler_end(%1, compiler="ccompiler")
}
)";
const std::string kSignature = "sut-error:merge:TVMError";
const std::string kRelay =
    "// replay: --sut tvm --no-run --merge => " + kSignature + "\n" + std::string(kGraph);

// Appended to the fake package's __init__.py: TVM's partitioned module for kGraph exactly as the
// builtin pipeline makes it (so the graph passes), and MergeCompilerRegions by merge_rules.py.
const char* kPackageTail = R"PY(

from .relay import merge_rules as _rules  # noqa: E402
PARTITIONED = """def @main(%aotfuzz_param_0: Tensor[(2), float32]) -> Tensor[(2), float32] {
  @tvmgen_default_ccompiler_main_0(%aotfuzz_param_0)
}

def @tvmgen_default_ccompiler_main_0(%ccompiler_0_i0: Tensor[(2), float32], Inline=1, Compiler="ccompiler", global_symbol="tvmgen_default_ccompiler_main_0", Primitive=1) -> Tensor[(2), float32] {
  add(%ccompiler_0_i0, %ccompiler_0_i0)
}
"""
IRModule.astext = lambda self, show_meta_data=True: PARTITIONED  # noqa: F821


def _merge():
    def run(mod):
        if _rules.REFUSES:
            raise TVMError("MergeCompilerRegions refuses every graph (merge_rules.py)")  # noqa: F821
        return mod

    return run


relay.transform.MergeCompilerRegions = staticmethod(_merge)  # noqa: F821
)PY";

std::string run_ok(const std::vector<std::string>& argv, const fs::path& dir) {
  host::RunLimits limits;
  limits.working_dir = dir.string();
  limits.address_space = 0;
  const host::RunResult r = host::run_process(argv, limits);
  EXPECT_TRUE(r.exited_ok()) << argv[0] << " " << argv[1] << ": " << r.stderr_text;
  std::string out = r.stdout_text;
  while (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

std::string git(const fs::path& repo, const std::vector<std::string>& args) {
  // An identity of its own, and no user configuration (run_process gives git no HOME).
  std::vector<std::string> argv = {"git", "-c", "user.name=aotfuzz test", "-c",
                                   "user.email=test@example.invalid", "-c", "commit.gpgsign=false"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run_ok(argv, repo);
}

// A TVM history: one commit per call of commit(), each an edit of the working tree.
class FakeTvmHistory {
 public:
  FakeTvmHistory() : dir_("aotfuzz-bisect-test") {
    const std::string dlpack = make_dlpack_mirror();
    fs::create_directories(tvm());
    git(tvm(), {"init", "-q", "-b", "main"});
    fs::copy(test_support::source_path("tests/tvm/fake_tvm/python"), tvm() / "python",
             fs::copy_options::recursive);
    std::ofstream(tvm() / "python/tvm/__init__.py", std::ios::app) << kPackageTail;
    set_refuses(false);
    // Gitlinks: dlpack (a mirror exists; the fake build needs it) and vta-hw (no mirror; the
    // CPU build does not need it). Empty directories keep them through `git add -A`.
    fs::create_directories(tvm() / "3rdparty/dlpack");
    fs::create_directories(tvm() / "3rdparty/vta-hw");
    git(tvm(), {"add", "-A"});
    git(tvm(), {"update-index", "--add", "--cacheinfo", "160000," + dlpack + ",3rdparty/dlpack"});
    git(tvm(), {"update-index", "--add", "--cacheinfo",
                "160000,1111111111111111111111111111111111111111,3rdparty/vta-hw"});
    git(tvm(), {"commit", "-q", "-m", "Fake TVM, merging works (#100)"});
    base_ = head();
  }

  fs::path dir() const { return dir_.path(); }
  fs::path tvm() const { return dir_.path() / "tvm"; }
  fs::path mirrors() const { return dir_.path() / "mirrors"; }
  const std::string& base() const { return base_; }

  std::string commit(const std::string& subject, const std::function<void()>& edit) {
    edit();
    git(tvm(), {"add", "-A"});
    git(tvm(), {"commit", "-q", "-m", subject});
    return head();
  }
  // MergeCompilerRegions refuses every graph (the finding reproduces) or works.
  void set_refuses(bool refuses) {
    write_file(tvm() / "python/tvm/relay/merge_rules.py",
               std::string("REFUSES = ") + (refuses ? "True" : "False") + "\n");
  }
  void touch_docs(const std::string& line) {
    fs::create_directories(tvm() / "docs");
    std::ofstream(tvm() / "docs/notes.txt", std::ios::app) << line << "\n";
  }
  void touch_python(const std::string& line) {
    std::ofstream(tvm() / "python/tvm/relay/merge_rules.py", std::ios::app) << "# " << line << "\n";
  }
  void set_broken_build(bool broken) {
    if (broken) {
      write_file(tvm() / "BROKEN_BUILD", "the fake build script refuses this tree\n");
    } else {
      fs::remove(tvm() / "BROKEN_BUILD");
    }
  }
  void set_broken_import(bool broken) {
    const fs::path marker = tvm() / "python/tvm/import_check.py";
    write_file(marker, broken ? "raise ImportError('fake TVM: cannot load libtvm.so')\n" : "\n");
    const fs::path init = tvm() / "python/tvm/__init__.py";
    std::string text = read_text(init);
    if (text.find("import_check") == std::string::npos) {
      text = "from . import import_check  # noqa: F401\n" + text;
      write_file(init, text);
    }
  }

  // The environment of aotfuzz for the fake build script.
  std::map<std::string, std::string> env(int kill_at = 0) const {
    std::map<std::string, std::string> e = {
        {"AOTFUZZ_FAKE_BUILD_COUNTER", (dir() / "builds").string()},
        {"AOTFUZZ_FAKE_BUILD_OUT", (dir() / "homes").string()}};
    if (kill_at > 0) e["AOTFUZZ_FAKE_BUILD_KILL_AT"] = std::to_string(kill_at);
    return e;
  }
  int builds() const {
    std::error_code ec;
    if (!fs::exists(dir() / "builds", ec)) return 0;
    return std::stoi(read_text(dir() / "builds"));
  }
  std::string build_args() const { return read_text(dir() / "builds.args"); }

  // The bisect command line for `target` with the fake build script and the mirrors.
  std::vector<std::string> bisect(const fs::path& target, const std::string& present,
                                  const std::string& absent,
                                  std::vector<std::string> more = {}) const {
    std::vector<std::string> args = {
        "bisect",         target.string(),
        "--tvm-git",      tvm().string(),
        "--present",      present,
        "--absent",       absent,
        "--build-script", test_support::source_path("tests/cli/fake_tvm_build.sh").string(),
        "--submodules",   mirrors().string()};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  fs::path write_relay(const std::string& name) const {
    const fs::path p = dir() / "cases" / name;
    fs::create_directories(p.parent_path());
    write_file(p, kRelay);
    return p;
  }

 private:
  std::string head() const { return git(tvm(), {"rev-parse", "HEAD"}); }
  // A mirror laid out as /work/.mirror's: mirrors/dmlc+dlpack/repo.
  std::string make_dlpack_mirror() const {
    const fs::path repo = mirrors() / "dmlc+dlpack" / "repo";
    fs::create_directories(repo / "include/dlpack");
    git(repo, {"init", "-q", "-b", "main"});
    write_file(repo / "include/dlpack/dlpack.h", "/* a fake dlpack */\n");
    git(repo, {"add", "-A"});
    git(repo, {"commit", "-q", "-m", "dlpack"});
    return git(repo, {"rev-parse", "HEAD"});
  }

  host::TempDir dir_;
  std::string base_;
};

// base (good), docs, python tidy, REGRESSION, docs, python, FIX, docs, python.
struct LinearHistory {
  FakeTvmHistory h;
  std::string docs1, tidy, regression, docs2, more, fix, docs3, last;
  LinearHistory() {
    docs1 = h.commit("[Docs] notes (#101)", [&] { h.touch_docs("one"); });
    tidy = h.commit("[Relay] Tidy the merge rules (#102)", [&] { h.touch_python("tidy"); });
    regression = h.commit("[Relay] MergeCompilerRegions refuses every graph (#103)",
                          [&] { h.set_refuses(true); });
    docs2 = h.commit("[Docs] more notes (#104)", [&] { h.touch_docs("two"); });
    more = h.commit("[Relay] Comment the rules (#105)", [&] { h.touch_python("more"); });
    fix = h.commit("[Relay] Fix MergeCompilerRegions (#106)", [&] { h.set_refuses(false); });
    docs3 = h.commit("[Docs] last notes (#107)", [&] { h.touch_docs("three"); });
    last = h.commit("[Relay] One more comment (#108)", [&] { h.touch_python("last"); });
  }
};

// base (good), a commit that does not build, one whose TVM does not import, the REGRESSION
// (import and build repaired), docs.
struct HistoryWithSkips {
  FakeTvmHistory h;
  std::string unbuildable, no_import, regression, docs;
  HistoryWithSkips() {
    unbuildable =
        h.commit("[Build] A tree that does not compile (#201)", [&] { h.set_broken_build(true); });
    no_import = h.commit("[Runtime] A libtvm.so that does not load (#202)", [&] {
      h.set_broken_build(false);
      h.set_broken_import(true);
    });
    regression = h.commit("[Relay] MergeCompilerRegions refuses every graph (#203)", [&] {
      h.set_broken_import(false);
      h.set_refuses(true);
    });
    docs = h.commit("[Docs] notes (#204)", [&] { h.touch_docs("one"); });
  }
};

nlohmann::json read_json(const fs::path& path) { return nlohmann::json::parse(read_text(path)); }

TEST(Bisect, FindsTheCommitThatIntroducedABundlesFindingAndRecordsItInTheBundleAndReport) {
  LinearHistory l;
  const fs::path findings = l.h.dir() / "findings";
  const fs::path bundle = findings / "sut-error_merge_TVMError";
  fs::create_directories(bundle);
  write_file(bundle / "reduced.relay", kRelay);
  write_file(
      bundle / "verdict.json",
      nlohmann::json{{"signature", kSignature},
                     {"info", {{"reduction", {{"complete", true}, {"after", {{"ops", 1}}}}}}}}
          .dump());
  const fs::path patch = l.h.dir() / "extra.diff";
  write_file(patch, "a patch the fake build script ignores\n");

  const auto r =
      run_aotfuzz(l.h.bisect(bundle, l.more, l.h.base(),
                             {"--jobs", "1", "--release-patches", "--patch", patch.string()}),
                  120, l.h.env());
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("introduced by: " + l.regression), std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("pr: #103"), std::string::npos) << r.stdout_text;
  // A progress line per step; vta-hw has no mirror and is left out, once.
  EXPECT_NE(r.stderr_text.find("bisect: step 1, 5 candidates left, building "), std::string::npos)
      << r.stderr_text;
  EXPECT_NE(r.stderr_text.find("3rdparty/vta-hw: no mirror, left out"), std::string::npos);
  // The build script gets the tree and the build flags.
  EXPECT_NE(l.h.build_args().find(" --release-patches --patch " + patch.string() + " --jobs 1"),
            std::string::npos)
      << l.h.build_args();

  const auto verdict = read_json(bundle / "verdict.json");
  ASSERT_TRUE(verdict.contains("bisect")) << verdict.dump(2);
  EXPECT_EQ(verdict.at("bisect").at("commit"), l.regression);
  EXPECT_EQ(verdict.at("bisect").at("pr"), 103);
  EXPECT_EQ(verdict.at("bisect").at("kind"), "introduced");
  const auto record = read_json(bundle / "bisect.json");
  EXPECT_EQ(record.at("steps").at(l.regression).at("outcome"), "reproduces");

  const auto report =
      run_aotfuzz({"report", findings.string(), "--out", (l.h.dir() / "report.html").string()});
  ASSERT_EQ(report.exit_code, 0) << report.stderr_text;
  const std::string page = read_text(l.h.dir() / "report.html");
  EXPECT_NE(page.find("introduced by <code>" + l.regression.substr(0, 12) + "</code>"),
            std::string::npos);
  EXPECT_NE(page.find("(PR #103)"), std::string::npos);
}

TEST(Bisect, FindsTheCommitThatFixedAFindingWhenPresentIsTheOlderEnd) {
  LinearHistory l;
  const fs::path file = l.h.write_relay("merge_refuses.relay");
  const auto r = run_aotfuzz(l.h.bisect(file, l.regression, l.last), 120, l.h.env());
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("fixed by: " + l.fix), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("pr: #106"), std::string::npos) << r.stdout_text;
  // The record is next to the file.
  const auto record = read_json(file.parent_path() / "bisect.json");
  EXPECT_EQ(record.at("result").at("kind"), "fixed");
  EXPECT_EQ(record.at("result").at("commit"), l.fix);
  EXPECT_EQ(record.at("steps").at(l.fix).at("outcome"), "passes");
}

TEST(Bisect, SkipsCommitsThatDoNotBuildOrImportAndNamesThemWhenTheyLeaveTheAnswerOpen) {
  HistoryWithSkips s;
  const fs::path file = s.h.write_relay("merge_refuses.relay");
  const auto r = run_aotfuzz(s.h.bisect(file, s.docs, s.h.base()), 120, s.h.env());
  EXPECT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("ambiguous: introduced by one of these 3 commits"),
            std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find(s.unbuildable.substr(0, 12) +
                               " [Build] A tree that does not compile (#201)  [cannot-build]"),
            std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find(s.no_import.substr(0, 12) +
                               " [Runtime] A libtvm.so that does not load (#202)  "
                               "[does-not-import]"),
            std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find(s.regression.substr(0, 12)), std::string::npos) << r.stdout_text;
  const auto result = read_json(file.parent_path() / "bisect.json").at("result");
  EXPECT_FALSE(result.at("answered").get<bool>());
  ASSERT_EQ(result.at("skipped").size(), 2u) << result.dump(2);
  ASSERT_EQ(result.at("could_be").size(), 3u) << result.dump(2);
  EXPECT_EQ(result.at("could_be")[2].at("commit"), s.regression);
}

TEST(Bisect, SwappedPresentAndAbsentGiveNoAnswerRatherThanACommitNextToAnEnd) {
  LinearHistory l;
  const fs::path file = l.h.write_relay("merge_refuses.relay");
  // The finding reproduces at `more`, not at the base: the ends are swapped. Every step agrees
  // with them, so the answer would be the docs commit next to the base.
  const auto r = run_aotfuzz(l.h.bisect(file, l.h.base(), l.more), 120, l.h.env());
  EXPECT_EQ(r.exit_code, 1) << r.stdout_text << r.stderr_text;
  EXPECT_EQ(r.stdout_text.find("fixed by:"), std::string::npos) << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("no answer: --present " + l.h.base().substr(0, 12)),
            std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stdout_text.find("the ends are wrong or swapped"), std::string::npos)
      << r.stdout_text;
  EXPECT_NE(r.stderr_text.find("the answer rests on --present " + l.h.base().substr(0, 12)),
            std::string::npos)
      << r.stderr_text;
  const auto result = read_json(file.parent_path() / "bisect.json").at("result");
  EXPECT_FALSE(result.at("answered").get<bool>());
  EXPECT_TRUE(result.at("ends_contradicted").get<bool>());
  EXPECT_EQ(result.at("unconfirmed_ends").at(0).at("commit"), l.h.base());
}

TEST(Bisect, PathsRestrictTheCandidatesToCommitsTouchingThem) {
  LinearHistory l;
  const fs::path file = l.h.write_relay("merge_refuses.relay");
  // The present end is a docs commit: with --paths python it is no candidate itself.
  const auto r =
      run_aotfuzz(l.h.bisect(file, l.docs2, l.h.base(), {"--paths", "python"}), 120, l.h.env());
  EXPECT_EQ(r.exit_code, 0) << r.stdout_text << r.stderr_text;
  EXPECT_NE(r.stdout_text.find("introduced by: " + l.regression), std::string::npos)
      << r.stdout_text;
  const auto record = read_json(file.parent_path() / "bisect.json");
  EXPECT_EQ(record.at("result").at("candidates"), 2) << "tidy and the regression, not the docs";
  for (const auto& [commit, step] : record.at("steps").items()) {
    EXPECT_NE(commit, l.docs1) << "a docs commit was built";
  }
}

TEST(Bisect, AKilledRunResumesFromBisectJsonWithoutRebuildingTheRecordedSteps) {
  HistoryWithSkips s;
  const fs::path file = s.h.write_relay("merge_refuses.relay");
  const fs::path record = file.parent_path() / "bisect.json";
  // The third build kills aotfuzz: two steps are recorded, the third is lost.
  const auto killed = run_aotfuzz(s.h.bisect(file, s.docs, s.h.base()), 120, s.h.env(3));
  EXPECT_EQ(killed.kind, host::ExitKind::kSignaled) << killed.describe() << killed.stderr_text;
  EXPECT_EQ(s.h.builds(), 3);
  ASSERT_EQ(read_json(record).at("steps").size(), 2u);

  const auto resumed = run_aotfuzz(s.h.bisect(file, s.docs, s.h.base()), 120, s.h.env());
  EXPECT_EQ(resumed.exit_code, 1) << resumed.stdout_text << resumed.stderr_text;
  EXPECT_EQ(s.h.builds(), 4) << "only the lost step was built again";
  EXPECT_NE(resumed.stderr_text.find("2 steps recorded in " + record.string() + " are reused"),
            std::string::npos)
      << resumed.stderr_text;
  EXPECT_NE(resumed.stderr_text.find("bisect: step 3, "), std::string::npos) << resumed.stderr_text;
  EXPECT_EQ(read_json(record).at("result").at("could_be").size(), 3u);
}

TEST(Bisect, BadInputIsRefusedWithOneLineAndExit2BeforeAnyBuild) {
  LinearHistory l;
  const fs::path file = l.h.write_relay("merge_refuses.relay");
  expect_one_line_usage_error(l.h.bisect(file, "no-such-rev", l.h.base()),
                              "unknown revision 'no-such-rev'");
  std::vector<std::string> not_git = l.h.bisect(file, l.more, l.h.base());
  not_git[3] = l.h.mirrors().string();
  expect_one_line_usage_error(not_git, "not a git repository");
  expect_one_line_usage_error(l.h.bisect(file, l.more, l.more), "the same commit");
  const fs::path plain = l.h.dir() / "cases" / "no_finding.relay";
  write_file(plain, kGraph);
  expect_one_line_usage_error(l.h.bisect(plain, l.more, l.h.base()),
                              "no `// replay: FLAGS => SIGNATURE` line");
  EXPECT_EQ(l.h.builds(), 0);
}

}  // namespace
}  // namespace aotfuzz::cli::test

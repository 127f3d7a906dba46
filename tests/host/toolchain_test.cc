// Tests of the toolchain driver: finding compilers, compiling, and classifying failures so that a
// toolchain problem never passes for a pipeline bug.
#include <gtest/gtest.h>

#include <filesystem>

#include "host/tempdir.h"
#include "host/toolchain.h"
#include "oracle/verdict.h"
#include "tests/support/files.h"
#include "tests/support/processes.h"

namespace aotfuzz::host {
namespace {

using oracle::verdict_from_compile;
using oracle::VerdictKind;
using oracle::CompileError;
using oracle::signature;

using test_support::count_entries;
using test_support::toolchain_of;
using test_support::write_file;

constexpr const char* kHello = R"(#include <stdio.h>
int main(int argc, char** argv) {
  (void)argv;
  printf("hello %d\n", 40 + argc);
  return 3;
}
)";

// A syntax error on line 2.
constexpr const char* kBroken = "int main(void) {\n  return 0\n}\n";

TEST(Toolchain, CompilerKindNamesRoundTrip) {
  for (auto kind : {CompilerKind::kTcc, CompilerKind::kGcc, CompilerKind::kClang}) {
    EXPECT_EQ(parse_compiler_kind(compiler_kind_name(kind)), kind);
  }
  EXPECT_EQ(parse_compiler_kind("msvc"), std::nullopt);
}

TEST(Toolchain, FindInPathReturnsAnAbsoluteExecutableAndRejectsUnknownNames) {
  auto sh = find_in_path("sh");
  ASSERT_TRUE(sh.has_value());
  EXPECT_TRUE(std::filesystem::path(*sh).is_absolute());
  EXPECT_EQ(find_in_path("aotfuzz-no-such-program-anywhere"), std::nullopt);
  EXPECT_EQ(find_in_path("/nonexistent/bin/cc"), std::nullopt);
  EXPECT_EQ(find_in_path(""), std::nullopt);
}

TEST(Toolchain, FindsEachInstalledCompilerWithItsVersion) {
  int found = 0;
  for (auto kind : {CompilerKind::kTcc, CompilerKind::kGcc, CompilerKind::kClang}) {
    const auto& tc = toolchain_of(kind);
    if (!tc) continue;
    ++found;
    EXPECT_EQ(tc->kind, kind);
    EXPECT_TRUE(std::filesystem::path(tc->path).is_absolute()) << tc->path;
    EXPECT_NE(tc->version.find(kind == CompilerKind::kGcc ? "gcc" : compiler_kind_name(kind)),
              std::string::npos)
        << tc->version;
  }
  if (found == 0) GTEST_SKIP() << "no C compiler (tcc, gcc, clang) is installed";
}

TEST(Toolchain, DefaultPrefersTccThenGccThenClang) {
  auto def = default_toolchain();
  std::optional<CompilerKind> expected;
  for (auto kind : {CompilerKind::kClang, CompilerKind::kGcc, CompilerKind::kTcc}) {
    if (toolchain_of(kind)) expected = kind;
  }
  if (!expected) GTEST_SKIP() << "no C compiler (tcc, gcc, clang) is installed";
  ASSERT_TRUE(def.has_value());
  EXPECT_EQ(def->kind, *expected);
}

TEST(Toolchain, ProbingANonCompilerFails) {
  EXPECT_FALSE(std::holds_alternative<Toolchain>(probe_toolchain(CompilerKind::kGcc, "/nonexistent/gcc")));
  TempDir dir("aotfuzz-test-probe");
  write_file(dir.file("notes.txt"), "not a program");
  EXPECT_FALSE(std::holds_alternative<Toolchain>(
      probe_toolchain(CompilerKind::kGcc, dir.file("notes.txt").string())));
}

class EachCompiler : public ::testing::TestWithParam<CompilerKind> {
 protected:
  void SetUp() override {
    if (!toolchain_of(GetParam())) {
      GTEST_SKIP() << compiler_kind_name(GetParam()) << " is not installed on this machine";
    }
  }
  const Toolchain& tc() const { return *toolchain_of(GetParam()); }
  TempDir dir_{"aotfuzz-test-cc"};
};

TEST_P(EachCompiler, CompilesAValidProgramThatThenRuns) {
  write_file(dir_.file("hello.c"), kHello);
  std::string exe = dir_.file("hello").string();
  CompileResult c = compile(tc(), {dir_.file("hello.c").string()}, exe);
  ASSERT_EQ(c.status, CompileStatus::kOk) << c.message << "\n" << c.diagnostics;
  EXPECT_EQ(c.command.front(), tc().path);
  EXPECT_EQ(verdict_from_compile(c, GetParam()), std::nullopt);
  RunResult r = run_process({exe, "arg"});
  EXPECT_EQ(r.kind, ExitKind::kExited);
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_EQ(r.stdout_text, "hello 42\n");
}

TEST_P(EachCompiler, ASyntaxErrorIsACompileErrorWithTheDiagnostic) {
  write_file(dir_.file("broken.c"), kBroken);
  std::string exe = dir_.file("broken").string();
  CompileResult c = compile(tc(), {dir_.file("broken.c").string()}, exe);
  EXPECT_EQ(c.status, CompileStatus::kCompileError) << c.message;
  EXPECT_NE(c.diagnostics.find("broken.c:"), std::string::npos) << c.diagnostics;
  EXPECT_NE(c.diagnostics.find("error"), std::string::npos) << c.diagnostics;
  EXPECT_NE(c.message.find("error"), std::string::npos) << c.message;
  EXPECT_FALSE(std::filesystem::exists(exe));
  auto v = verdict_from_compile(c, GetParam());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(signature(*v), "compile-error:codegen");
  EXPECT_TRUE(is_finding(*v));
  EXPECT_EQ(std::get<CompileError>(v->detail).compiler, compiler_kind_name(GetParam()));
}

TEST_P(EachCompiler, AStaleExecutableIsRemovedBeforeCompiling) {
  write_file(dir_.file("broken.c"), kBroken);
  std::string exe = dir_.file("out").string();
  write_file(exe, "stale");
  CompileResult c = compile(tc(), {dir_.file("broken.c").string()}, exe);
  EXPECT_EQ(c.status, CompileStatus::kCompileError);
  EXPECT_FALSE(std::filesystem::exists(exe));
}

TEST_P(EachCompiler, DefinesAndIncludeDirsReachTheCompiler) {
  std::filesystem::create_directories(dir_.file("inc"));
  write_file(dir_.file("inc") / "value.h", "#define BASE 30\n");
  write_file(dir_.file("main.c"),
             "#include \"value.h\"\nint main(void) { return BASE + EXTRA; }\n");
  CompileOptions options;
  options.include_dirs.push_back(dir_.file("inc").string());
  options.defines.push_back("EXTRA=12");
  std::string exe = dir_.file("main").string();
  CompileResult c = compile(tc(), {dir_.file("main.c").string()}, exe, options);
  ASSERT_EQ(c.status, CompileStatus::kOk) << c.diagnostics;
  EXPECT_EQ(run_process({exe}).exit_code, 42);
}

INSTANTIATE_TEST_SUITE_P(AllCompilers, EachCompiler,
                         ::testing::Values(CompilerKind::kTcc, CompilerKind::kGcc,
                                           CompilerKind::kClang),
                         [](const auto& info) {
                           return std::string(compiler_kind_name(info.param));
                         });

// gcc and clang turn warnings into errors; with the flag off the same code compiles.
TEST(Toolchain, WarningsAreErrorsForGccAndClangUnlessDisabled) {
  int tested = 0;
  for (auto kind : {CompilerKind::kGcc, CompilerKind::kClang}) {
    const auto& tc = toolchain_of(kind);
    if (!tc) continue;
    ++tested;
    TempDir dir("aotfuzz-test-warn");
    write_file(dir.file("warn.c"), "int main(void) { int unused; return 0; }\n");
    std::string src = dir.file("warn.c").string();
    CompileResult strict = compile(*tc, {src}, dir.file("a").string());
    EXPECT_EQ(strict.status, CompileStatus::kCompileError) << compiler_kind_name(kind);
    EXPECT_NE(strict.diagnostics.find("unused"), std::string::npos) << strict.diagnostics;
    CompileOptions lax;
    lax.warnings_as_errors = false;
    EXPECT_EQ(compile(*tc, {src}, dir.file("b").string(), lax).status, CompileStatus::kOk);
  }
  if (tested == 0) GTEST_SKIP() << "neither gcc nor clang is installed";
}

TEST(Toolchain, ASyntaxOnlyCheckReportsWarningsAndWritesNothing) {
  int tested = 0;
  for (auto kind : {CompilerKind::kGcc, CompilerKind::kClang}) {
    const auto& tc = toolchain_of(kind);
    if (!tc) continue;
    ++tested;
    TempDir dir("aotfuzz-test-syntax");
    write_file(dir.file("warn.c"), "int f(int unused) { return 0; }\n");
    write_file(dir.file("clean.c"), "int f(int used) { return used; }\n");
    CompileOptions check;
    check.syntax_only = true;
    CompileResult bad = compile(*tc, {dir.file("warn.c").string()}, "", check);
    EXPECT_EQ(bad.status, CompileStatus::kCompileError) << compiler_kind_name(kind);
    EXPECT_NE(bad.diagnostics.find("unused"), std::string::npos) << bad.diagnostics;
    CompileResult good = compile(*tc, {dir.file("clean.c").string()}, "", check);
    EXPECT_EQ(good.status, CompileStatus::kOk) << good.diagnostics;
    std::size_t files = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir.path())) {
      (void)entry;
      ++files;
    }
    EXPECT_EQ(files, 2u);
  }
  if (tested == 0) GTEST_FAIL() << "neither gcc nor clang is installed";
  // tcc cannot check syntax alone: asking it is the environment's failure, not the code's.
  if (const auto& tcc = toolchain_of(CompilerKind::kTcc)) {
    CompileOptions check;
    check.syntax_only = true;
    EXPECT_EQ(compile(*tcc, {"x.c"}, "", check).status, CompileStatus::kToolchainError);
  }
}

TEST(Toolchain, AMissingCompilerIsAToolchainErrorNotAFinding) {
  TempDir dir("aotfuzz-test-missing");
  write_file(dir.file("hello.c"), kHello);
  Toolchain ghost{CompilerKind::kGcc, "/nonexistent/bin/gcc", "gcc (ghost) 0"};
  CompileResult c = compile(ghost, {dir.file("hello.c").string()}, dir.file("hello").string());
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_EQ(c.run.kind, ExitKind::kStartFailed);
  EXPECT_NE(c.message.find("/nonexistent/bin/gcc"), std::string::npos) << c.message;
  auto v = verdict_from_compile(c, ghost.kind);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(v->kind(), VerdictKind::kToolchainError);
  EXPECT_FALSE(is_finding(*v));
  EXPECT_EQ(exit_code(*v), 3);
}

TEST(Toolchain, AMissingSourceIsAToolchainError) {
  auto tc = default_toolchain();
  if (!tc) GTEST_SKIP() << "no C compiler is installed";
  TempDir dir("aotfuzz-test-missing");
  CompileResult c = compile(*tc, {dir.file("absent.c").string()}, dir.file("x").string());
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_NE(c.message.find("absent.c"), std::string::npos);
}

TEST(Toolchain, SanitizersWithTccAreAToolchainError) {
  const auto& tcc = toolchain_of(CompilerKind::kTcc);
  if (!tcc) GTEST_SKIP() << "tcc is not installed on this machine";
  TempDir dir("aotfuzz-test-san");
  write_file(dir.file("hello.c"), kHello);
  CompileOptions options;
  options.sanitize = true;
  CompileResult c = compile(*tcc, {dir.file("hello.c").string()}, dir.file("h").string(), options);
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_NE(c.message.find("sanitizer"), std::string::npos) << c.message;
}

TEST(Toolchain, SanitizedGccBuildReportsAnOutOfBoundsWrite) {
  const auto& gcc = toolchain_of(CompilerKind::kGcc);
  if (!gcc) GTEST_SKIP() << "gcc is not installed on this machine";
  TempDir dir("aotfuzz-test-san");
  write_file(dir.file("oob.c"),
             "#include <stdlib.h>\n"
             "int main(int argc, char** argv) {\n"
             "  int* p = malloc(4 * sizeof(int));\n"
             "  (void)argv;\n"
             "  p[3 + argc] = 1;\n"
             "  free(p);\n"
             "  return 0;\n"
             "}\n");
  CompileOptions options;
  options.sanitize = true;
  std::string exe = dir.file("oob").string();
  CompileResult c = compile(*gcc, {dir.file("oob.c").string()}, exe, options);
  ASSERT_EQ(c.status, CompileStatus::kOk) << c.diagnostics;
  RunLimits limits;
  limits.address_space = 0;
  limits.env["ASAN_OPTIONS"] = "abort_on_error=1:detect_leaks=0";
  RunResult r = run_process({exe}, limits);
  EXPECT_EQ(r.kind, ExitKind::kSignaled) << r.describe();
  EXPECT_EQ(r.signal, SIGABRT);
  EXPECT_NE(r.stderr_text.find("AddressSanitizer"), std::string::npos);
}

// Fake compilers built from C: one that crashes, one that reports an internal error, one that
// hangs. None of them may be classified as a compile error.
class FakeCompiler : public ::testing::Test {
 protected:
  void SetUp() override {
    auto tc = default_toolchain();
    if (!tc) GTEST_SKIP() << "no C compiler is installed";
    write_file(dir_.file("fake.c"),
               "#define _GNU_SOURCE\n"
               "#include <signal.h>\n#include <stdio.h>\n#include <string.h>\n"
               "#include <sys/stat.h>\n#include <unistd.h>\n"
               "int main(int argc, char** argv) {\n"
               "  const char* self = strrchr(argv[0], '/') + 1;\n"
               "  (void)argc;\n"
               "  if (strcmp(self, \"crash\") == 0) raise(SIGSEGV);\n"
               "  if (strcmp(self, \"hang\") == 0) for (;;) sleep(1);\n"
               "  if (strcmp(self, \"ice\") == 0) {\n"
               "    fputs(\"x.c:1:1: internal compiler error: Segmentation fault\\n\", stderr);\n"
               "    return 4;\n"
               "  }\n"
               "  if (strcmp(self, \"ice1\") == 0) {\n"
               "    fputs(\"x.c:1: internal compiler error: in foo\\n\", stderr);\n"
               "    return 1;\n"
               "  }\n"
               "  if (strcmp(self, \"silent\") == 0) return 1;\n"
               "  if (strcmp(self, \"truncate\") == 0) {\n"
               "    /* Half of a real executable, as a write that hit a full disk leaves. */\n"
               "    const char* out = NULL;\n"
               "    for (int i = 1; i + 1 < argc; ++i) if (strcmp(argv[i], \"-o\") == 0) out = "
               "argv[i + 1];\n"
               "    FILE* in = fopen(\"/proc/self/exe\", \"rb\");\n"
               "    FILE* to = out ? fopen(out, \"wb\") : NULL;\n"
               "    if (!in || !to) return 9;\n"
               "    fseek(in, 0, SEEK_END);\n"
               "    long half = ftell(in) / 2;\n"
               "    fseek(in, 0, SEEK_SET);\n"
               "    for (long k = 0; k < half; ++k) fputc(fgetc(in), to);\n"
               "    fclose(to);\n"
               "    chmod(out, 0755);\n"
               "    return 0;\n"
               "  }\n"
               "  return 0;\n"
               "}\n");
    for (const char* name : {"crash", "hang", "ice", "ice1", "silent", "noop", "truncate"}) {
      CompileResult c = compile(*tc, {dir_.file("fake.c").string()}, dir_.file(name).string());
      ASSERT_TRUE(c.ok()) << c.diagnostics;
    }
    write_file(dir_.file("src.c"), kHello);
  }
  CompileResult run_fake(const char* name, CompileOptions options = {}) {
    Toolchain fake{CompilerKind::kGcc, dir_.file(name).string(), "fake"};
    return compile(fake, {dir_.file("src.c").string()}, dir_.file("out").string(), options);
  }
  TempDir dir_{"aotfuzz-test-fake"};
};

TEST_F(FakeCompiler, ACrashingCompilerIsAToolchainError) {
  CompileResult c = run_fake("crash");
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_NE(c.message.find("SIGSEGV"), std::string::npos) << c.message;
}

TEST_F(FakeCompiler, AnInternalCompilerErrorIsAToolchainErrorWhateverTheExitCode) {
  EXPECT_EQ(run_fake("ice").status, CompileStatus::kToolchainError);
  CompileResult c = run_fake("ice1");
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_NE(c.message.find("internal compiler error"), std::string::npos) << c.message;
}

TEST_F(FakeCompiler, FailingWithoutDiagnosticsIsAToolchainError) {
  EXPECT_EQ(run_fake("silent").status, CompileStatus::kToolchainError);
}

TEST_F(FakeCompiler, SucceedingWithoutWritingTheExecutableIsAToolchainError) {
  CompileResult c = run_fake("noop");
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_NE(c.message.find("no executable"), std::string::npos) << c.message;
}

TEST_F(FakeCompiler, AnExecutableCutShortIsAToolchainErrorNotAProgramThatCrashes) {
  CompileResult c = run_fake("truncate");
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_NE(c.message.find("incomplete"), std::string::npos) << c.message;
  EXPECT_NE(c.message.find("file system full"), std::string::npos) << c.message;
}

TEST_F(FakeCompiler, AHangingCompilerTimesOutAsAToolchainError) {
  CompileOptions options;
  options.timeout = std::chrono::milliseconds(300);
  CompileResult c = run_fake("hang", options);
  EXPECT_EQ(c.status, CompileStatus::kToolchainError);
  EXPECT_EQ(c.run.kind, ExitKind::kTimedOut);
  EXPECT_LT(c.run.elapsed, std::chrono::milliseconds(3000));
}

TEST_F(FakeCompiler, AVersionProbeThatHangsOrFailsSaysSoRatherThanNotInstalled) {
  const std::string hang = dir_.file("hang").string();
  // The phrase of why, from the one version query that failed.
  auto problem = [](CompilerKind kind, const std::string& path) {
    auto r = probe_toolchain(kind, path);
    return std::holds_alternative<std::string>(r) ? std::get<std::string>(r) : std::string();
  };
  const std::string why = problem(CompilerKind::kGcc, hang);
  EXPECT_NE(why.find(hang + " --version timed out"), std::string::npos) << why;
  EXPECT_NE(
      problem(CompilerKind::kTcc, dir_.file("crash").string()).find("-v signaled SIGSEGV"),
      std::string::npos)
      << problem(CompilerKind::kTcc, dir_.file("crash").string());
  EXPECT_NE(
      problem(CompilerKind::kGcc, dir_.file("noop").string()).find("printed no version"),
      std::string::npos);
  EXPECT_EQ(problem(CompilerKind::kGcc, dir_.file("nothing-here").string()),
            dir_.file("nothing-here").string() + " is not an executable file");
}

// gcc writes temporary files; killed at the time limit it cannot clean them up, so compile()
// gives it a private TMPDIR and removes that.
TEST(Toolchain, CompilationsLeaveNoTemporaryFilesEvenWhenKilled) {
  test_support::ScopedTmpdir tmp;
  TempDir work("aotfuzz-test-work");  // inside tmp; counted out below
  ASSERT_EQ(count_entries(tmp.path()), 1u);
  write_file(work.file("hello.c"), kHello);
  for (auto kind : {CompilerKind::kTcc, CompilerKind::kGcc, CompilerKind::kClang}) {
    const auto& tc = toolchain_of(kind);
    if (!tc) continue;
    CompileResult ok = compile(*tc, {work.file("hello.c").string()}, work.file("h").string());
    EXPECT_TRUE(ok.ok()) << ok.diagnostics;
    if (kind == CompilerKind::kTcc) continue;  // tcc writes no temporary files
    CompileOptions hurry;
    hurry.timeout = std::chrono::milliseconds(1);
    CompileResult killed =
        compile(*tc, {work.file("hello.c").string()}, work.file("k").string(), hurry);
    EXPECT_EQ(killed.status, CompileStatus::kToolchainError) << compiler_kind_name(kind);
    EXPECT_EQ(count_entries(tmp.path()), 1u) << compiler_kind_name(kind);
  }
}

}  // namespace
}  // namespace aotfuzz::host

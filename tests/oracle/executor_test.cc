// Tests of the executor seam: batched programs run by the fork server give each case its own
// verdict, whatever the other cases of the batch do (crash, hang, flood, memory exhaustion,
// input clobbering, killing the runner), and agree with the single-program path.
#include <gtest/gtest.h>

#include <optional>
#include <span>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "generator/builder.h"
#include "host/tempdir.h"
#include "host/toolchain.h"
#include "ir/parser.h"
#include "ir/rng.h"
#include "oracle/case_flow.h"
#include "oracle/executor.h"
#include "oracle/harness.h"
#include "oracle/oracle.h"
#include "oracle/runner/runner.h"

namespace aotfuzz::oracle {
namespace {

ir::Module seed_graph() {
  std::ifstream in(std::string(AOTFUZZ_SOURCE_DIR) + "/corpus/seed/tvm_9036_annotated.relay");
  std::stringstream text;
  text << in.rdbuf();
  return ir::parse_module(text.str());
}

// A prepared case of the seed graph (packed interface) and what judging needs with it.
struct Case {
  ir::Module module;
  CaseOptions options;
  CaseResult result;
  PreparedCase prepared;
};

Case prepared_seed_case() {
  Case c;
  c.module = seed_graph();
  c.options.limits.timeout = std::chrono::milliseconds(1500);
  c.options.limits.address_space = std::uint64_t{256} << 20;
  auto p = prepare_case(c.module, c.options, c.result);
  EXPECT_TRUE(p.has_value());
  if (p) c.prepared = std::move(*p);
  return c;
}

// `statement` inserted at the start of the entry point tvmgen_default_run.
Case with_fault(const std::string& statement) {
  Case c = prepared_seed_case();
  for (auto& [name, text] : c.prepared.sources) {
    if (name != "tvmgen_default_lib.c") continue;
    const auto def = text.find("int32_t tvmgen_default_run(");
    EXPECT_NE(def, std::string::npos);
    const auto body = text.find("{\n", def);
    EXPECT_NE(body, std::string::npos);
    text.insert(body + 2, "  " + statement + "\n");
  }
  return c;
}

Verdict judge(Case& c, const RawResult& raw) {
  judge_case(c.module, c.options, c.prepared, raw, c.result);
  return c.result.verdict;
}

std::vector<RawResult> run_batched(std::vector<Case>& cases, BatchOptions options = {}) {
  std::vector<PreparedCase> prepared;
  for (const auto& c : cases) prepared.push_back(c.prepared);
  BatchedExecutor executor(options);
  return executor.run(prepared);
}

bool batched_tcc_available() { return batched_execution_available(host::CompilerKind::kTcc); }

void expect_five_fault_verdicts(const BatchOptions& options) {
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault("*(volatile int*)0 = 1;"));                      // segfault
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault("for (;;) {}"));                                 // hang
  cases.push_back(with_fault("for (;;) printf(\"AOTFUZZ flood\\n\");"));      // flood
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault(
      "for (;;) { void* p = malloc(1 << 20); if (p == NULL) abort(); }"));   // memory
  cases.push_back(with_fault(
      "((volatile uint8_t*)((DLTensor*)args[1].v_handle)->data)[8] = 1;"));  // clobber input 1
  cases.push_back(prepared_seed_case());
  for (auto& c : cases) {
    // The fault statements use stdlib.h's malloc and abort.
    c.prepared.sources.back().second.insert(0, "#include <stdlib.h>\n");
  }
  cases[3].options.limits.timeout = std::chrono::milliseconds(500);
  cases[3].prepared.limits.timeout = std::chrono::milliseconds(500);
  cases[4].prepared.limits.output_cap = 4096;

  const auto raws = run_batched(cases, options);
  ASSERT_EQ(raws.size(), cases.size());
  std::vector<Verdict> v;
  for (std::size_t i = 0; i < cases.size(); ++i) v.push_back(judge(cases[i], raws[i]));

  for (std::size_t i : {0, 2, 5, 8}) {
    EXPECT_EQ(v[i].kind(), VerdictKind::kPass) << i << ": " << summary(v[i]);
    EXPECT_FALSE(cases[i].result.actual.empty()) << i;
  }
  ASSERT_EQ(v[1].kind(), VerdictKind::kCrash) << summary(v[1]);
  EXPECT_EQ(std::get<Crash>(v[1].detail).signal, SIGSEGV);
  ASSERT_EQ(v[3].kind(), VerdictKind::kTimeout) << summary(v[3]);
  EXPECT_EQ(std::get<Timeout>(v[3].detail).limit_ms, 500);
  EXPECT_FALSE(raws[3].flood);
  ASSERT_EQ(v[4].kind(), VerdictKind::kTimeout) << summary(v[4]);
  EXPECT_TRUE(raws[4].flood);
  EXPECT_NE(std::get<Timeout>(v[4].detail).detail.find("output flood"), std::string::npos);
  // Without the memory limit the loop would reserve address space until the time limit.
  ASSERT_EQ(v[6].kind(), VerdictKind::kCrash) << summary(v[6]);
  EXPECT_EQ(std::get<Crash>(v[6].detail).signal, SIGABRT);
  ASSERT_EQ(v[7].kind(), VerdictKind::kInputClobbered) << summary(v[7]);
  EXPECT_EQ(std::get<InputClobbered>(v[7].detail).input_index, 1);
  EXPECT_EQ(std::get<InputClobbered>(v[7].detail).element_index, 2);
}

TEST(BatchedExecutor, FiveFaultyCasesGetTheirOwnVerdictsAndTheOthersPass) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  expect_five_fault_verdicts(BatchOptions());
}

TEST(BatchedExecutor, FiveFaultyCasesGetTheSameVerdictsWithAChildPerCase) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  BatchOptions options;
  options.cases_per_child = 1;
  expect_five_fault_verdicts(options);
}

TEST(BatchedExecutor, ACaseSeesZerosAroundItsBuffersWhateverRanBeforeItInTheSameChild) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  // A case with one-page tensors fills its buffers completely; the seed case after it reuses
  // those buffers and fails unless the bytes past its input and before its output are zero, as
  // they are in a program of its own.
  Case big;
  big.module = ir::parse_module(
      "def @main(%x: Tensor[(1024), float32]) {\n"
      "  %0 = annotation.compiler_begin(%x, compiler=\"ccompiler\");\n"
      "  %1 = add(%0, %0);\n"
      "  annotation.compiler_end(%1, compiler=\"ccompiler\")\n"
      "}\n");
  big.options.limits.timeout = std::chrono::milliseconds(1500);
  auto p = prepare_case(big.module, big.options, big.result);
  ASSERT_TRUE(p.has_value());
  big.prepared = std::move(*p);
  std::vector<Case> cases;
  cases.push_back(big);
  cases.push_back(with_fault(
      "if (((volatile uint8_t*)((DLTensor*)args[0].v_handle)->data)[400 + 8] != 0 ||"
      " ((volatile uint8_t*)((DLTensor*)args[3].v_handle)->data)[-8] != 0) return 7;"));
  for (std::uint32_t per_child : {0u, 1u}) {
    BatchOptions options;
    options.cases_per_child = per_child;
    const auto raws = run_batched(cases, options);
    ASSERT_EQ(raws.size(), 2u);
    for (std::size_t i = 0; i < 2; ++i) {
      const Verdict v = judge(cases[i], raws[i]);
      EXPECT_EQ(v.kind(), VerdictKind::kPass) << per_child << " " << i << ": " << summary(v);
    }
  }
}

// A case whose program forks a child that outlives it (holding whatever the runner gave it)
// neither stalls the batch nor outlives the batch: its verdict comes in its time limit, the
// other cases pass, and its child is gone once the batch is done.
void expect_a_forking_case_is_contained(const BatchOptions& options) {
  host::TempDir dir("aotfuzz-fork-test");
  const std::string pid_file = dir.file("grandchild.pid").string();
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault(
      "{ pid_t c = fork(); if (c == 0) { for (;;) pause(); } FILE* f = fopen(\"" + pid_file +
      "\", \"w\"); if (f) { fprintf(f, \"%d\\n\", (int)c); fclose(f); } }"));
  cases.push_back(prepared_seed_case());
  for (auto& c : cases) {
    c.prepared.sources.back().second.insert(0, "#include <stdio.h>\n#include <unistd.h>\n");
  }
  const auto t0 = std::chrono::steady_clock::now();
  const auto raws = run_batched(cases, options);
  ASSERT_EQ(raws.size(), cases.size());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
  for (std::size_t i : {0, 2}) {
    const Verdict v = judge(cases[i], raws[i]);
    EXPECT_EQ(v.kind(), VerdictKind::kPass) << i << ": " << summary(v);
  }
  // The forking case computed the right outputs; its verdict is its own, whatever it is.
  (void)judge(cases[1], raws[1]);
  std::ifstream in(pid_file);
  int pid = 0;
  ASSERT_TRUE(in >> pid) << "the case never forked";
  ASSERT_GT(pid, 0) << "fork failed in the case";
  // Its end is asynchronous: SIGKILL is delivered, then the process is reaped by whoever
  // inherited it.
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    std::string line;
    gone = !std::getline(stat, line) || line.find(") Z ") != std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "the forked child " << pid << " outlived its batch";
}

TEST(BatchedExecutor, AProgramThatForksIsContainedWithATccBatch) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  expect_a_forking_case_is_contained(BatchOptions{});
}

TEST(SingleProgramExecutor, AFileSystemThatRefusesWritesIsAToolchainErrorNotAFinding) {
  // In a child whose RLIMIT_FSIZE fails every write past 2 KiB (EFBIG), as a full disk fails
  // them: the case's sources cannot be written, and that is the environment's fault.
  const ir::Module m = seed_graph();
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit small{2048, 2048};
    ::setrlimit(RLIMIT_FSIZE, &small);
    const CaseResult r = run_case(m, CaseOptions{});
    const bool toolchain = r.verdict.kind() == VerdictKind::kToolchainError &&
                           summary(r.verdict).find("file system full") != std::string::npos;
    ::_exit(toolchain ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the verdict was not a toolchain-error naming a full disk";
}

TEST(SingleProgramExecutor, ASanitizedCasePassesUnderTheDefaultBudgetAndAMemoryHogIsStopped) {
  for (host::CompilerKind cc : {host::CompilerKind::kGcc, host::CompilerKind::kClang}) {
    if (!host::find_toolchain(cc)) GTEST_FAIL() << host::compiler_kind_name(cc) << " is not installed";
    // The default limits: a sanitizer runtime cannot start under an address-space limit, so the
    // budget is watched as resident memory instead.
    CaseOptions options;
    options.compiler = cc;
    options.sanitize = true;
    const CaseResult ok = run_case(seed_graph(), options);
    EXPECT_EQ(ok.verdict.kind(), VerdictKind::kPass) << host::compiler_kind_name(cc) << ": "
                                                      << summary(ok.verdict);
    Case hungry = with_fault("for (;;) { char* p = malloc(1 << 20); if (p == NULL) abort(); "
                             "memset(p, 1, 1 << 20); }");
    hungry.prepared.sources.back().second.insert(0, "#include <stdlib.h>\n");
    hungry.options = options;
    hungry.options.limits.address_space = std::uint64_t{256} << 20;
    auto p = prepare_case(hungry.module, hungry.options, hungry.result);
    ASSERT_TRUE(p.has_value());
    hungry.prepared.limits = p->limits;
    hungry.prepared.compiler = cc;
    hungry.prepared.sanitize = true;
    SingleProgramExecutor single;
    const auto raws = single.run(std::span<const PreparedCase>(&hungry.prepared, 1));
    const Verdict v = judge(hungry, raws[0]);
    ASSERT_EQ(v.kind(), VerdictKind::kTimeout) << summary(v);
    EXPECT_NE(std::get<Timeout>(v.detail).detail.find("resident memory"), std::string::npos)
        << summary(v);
  }
}

TEST(BatchedExecutor, ARunnerKilledByACaseIsRestartedAndTheOtherCasesAreRetried) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault("kill(getppid(), SIGKILL); _exit(3);"));
  cases.push_back(prepared_seed_case());
  for (auto& c : cases) {
    c.prepared.sources.back().second.insert(
        0, "#define _POSIX_C_SOURCE 200809L\n#include <signal.h>\n#include <unistd.h>\n");
  }
  std::vector<PreparedCase> prepared;
  for (const auto& c : cases) prepared.push_back(c.prepared);
  BatchedExecutor executor;
  const auto raws = executor.run(prepared);
  ASSERT_EQ(raws.size(), 3u);
  EXPECT_EQ(judge(cases[0], raws[0]).kind(), VerdictKind::kPass);
  const Verdict killer = judge(cases[1], raws[1]);
  EXPECT_EQ(killer.kind(), VerdictKind::kToolchainError) << summary(killer);
  EXPECT_EQ(judge(cases[2], raws[2]).kind(), VerdictKind::kPass);
  // The first runner died on the batch, the second on the killer case alone.
  EXPECT_GE(executor.runner_starts(), 3);
  // And the executor still works afterwards.
  const auto again = executor.run(std::span<const PreparedCase>(&prepared[0], 1));
  EXPECT_EQ(judge(cases[0], again[0]).kind(), VerdictKind::kPass);
}

TEST(BatchedExecutor, AStopRequestAbandonsTheBatchInFlightAndNoCaseIsJudged) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault("for (;;) {}"));
  cases.push_back(prepared_seed_case());
  cases[1].prepared.limits.timeout = std::chrono::milliseconds(30'000);
  std::vector<PreparedCase> prepared;
  for (const auto& c : cases) prepared.push_back(c.prepared);
  std::atomic<bool> stop{false};
  BatchOptions options;
  options.stop = &stop;
  BatchedExecutor executor(options);
  std::thread stopper([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(500));
    stop = true;
  });
  const auto t0 = std::chrono::steady_clock::now();
  const auto raws = executor.run(prepared);
  const auto took = std::chrono::steady_clock::now() - t0;
  stopper.join();
  ASSERT_EQ(raws.size(), 3u);
  for (const auto& r : raws) EXPECT_TRUE(r.cancelled);
  // The hanging case alone would hold the batch for 30 s.
  EXPECT_LT(took, std::chrono::seconds(10));
  // While the flag stays set nothing starts; once cleared, a new runner serves the next batch.
  const int starts = executor.runner_starts();
  EXPECT_TRUE(executor.run(std::span<const PreparedCase>(&prepared[0], 1))[0].cancelled);
  EXPECT_EQ(executor.runner_starts(), starts);
  stop = false;
  const auto again = executor.run(std::span<const PreparedCase>(&prepared[0], 1));
  EXPECT_FALSE(again[0].cancelled);
  EXPECT_EQ(judge(cases[0], again[0]).kind(), VerdictKind::kPass);
}

TEST(BatchedExecutor, LibtccTakesItsFilesFromTheDirectoryAotfuzzTccDirNames) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  namespace fs = std::filesystem;
  host::TempDir dir("aotfuzz-tcc-dir-test");
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  // Empty: tcc's own headers (stddef.h, stdarg.h) are not found, so nothing compiles; a header
  // the machine lacks is the environment's failure, never a finding.
  fs::create_directories(dir.file("empty"));
  ::setenv("AOTFUZZ_TCC_DIR", dir.file("empty").c_str(), 1);
  const auto without = run_batched(cases);
  ASSERT_EQ(without.size(), 1u);
  ASSERT_TRUE(without[0].settled.has_value());
  EXPECT_EQ(without[0].settled->kind(), VerdictKind::kToolchainError)
      << summary(*without[0].settled);
  EXPECT_NE(summary(*without[0].settled).find("system header"), std::string::npos)
      << summary(*without[0].settled);
  // A copy of the machine's tcc files: the case compiles and passes.
  const fs::path copy = dir.file("copy");
  fs::create_directories(copy);
  fs::copy(fs::path(AOTFUZZ_TCC_LIB_PATH) / "include", copy / "include");
  fs::copy_file(fs::path(AOTFUZZ_TCC_LIB_PATH) / "libtcc1.a", copy / "libtcc1.a");
  ::setenv("AOTFUZZ_TCC_DIR", copy.c_str(), 1);
  const auto with = run_batched(cases);
  ::unsetenv("AOTFUZZ_TCC_DIR");
  ASSERT_EQ(with.size(), 1u);
  EXPECT_EQ(judge(cases[0], with[0]).kind(), VerdictKind::kPass);
}

TEST(BatchedExecutor, ACaseThatDoesNotCompileIsACompileErrorAndTheOthersStillRun) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault("this is not C;"));
  cases.push_back(prepared_seed_case());
  const auto raws = run_batched(cases);
  EXPECT_EQ(judge(cases[0], raws[0]).kind(), VerdictKind::kPass);
  const Verdict bad = judge(cases[1], raws[1]);
  EXPECT_EQ(bad.kind(), VerdictKind::kCompileError) << summary(bad);
  EXPECT_EQ(bad.stage, Stage::kCodegen);
  EXPECT_EQ(judge(cases[2], raws[2]).kind(), VerdictKind::kPass);
}

// A single program of `c` built by `kind` (standing in for `confirm`, when given), judged.
Verdict judge_single(Case c, host::CompilerKind kind,
                     std::optional<host::CompilerKind> confirm = std::nullopt) {
  c.prepared.compiler = kind;
  c.prepared.confirm_compiler = confirm;
  c.prepared.diagnostic_in_signature = true;
  SingleProgramExecutor executor;
  const auto raws = executor.run(std::span<const PreparedCase>(&c.prepared, 1));
  judge_case(c.module, c.options, c.prepared, raws.front(), c.result);
  return c.result.verdict;
}

// A program of main.c and a support file (and its header) that says whether helper() is 7.
PreparedCase with_support(const std::string& helper_value, host::CompilerKind kind) {
  PreparedCase c;
  c.mod_name = "support";
  c.main_c = "int helper(void);\nint main(void) { return helper() == 7 ? 0 : 1; }\n";
  c.support_sources = {{"support.h", "#define HELPER " + helper_value + "\n"},
                       {"support.c", "#include \"support.h\"\nint helper(void);\n"
                                     "int helper(void) { return HELPER; }\n"}};
  c.compiler = kind;
  c.defines.clear();
  return c;
}

int exit_code_of(SingleProgramExecutor& executor, const PreparedCase& c) {
  const auto raws = executor.run(std::span<const PreparedCase>(&c, 1));
  EXPECT_FALSE(raws.front().settled) << summary(*raws.front().settled);
  return raws.front().run.exit_code;
}

TEST(SingleProgramExecutor, CompilesEachSupportFileOnceAndLinksItIntoEveryProgramItFits) {
  for (auto kind : {host::CompilerKind::kTcc, host::CompilerKind::kGcc}) {
    SCOPED_TRACE(std::string(host::compiler_kind_name(kind)));
    ASSERT_TRUE(host::find_toolchain(kind));
    SingleProgramExecutor keeping(/*keep_support_objects=*/true);
    SingleProgramExecutor whole;
    EXPECT_EQ(exit_code_of(keeping, with_support("7", kind)), 0);
    EXPECT_EQ(exit_code_of(keeping, with_support("7", kind)), 0);
    EXPECT_EQ(keeping.support_objects(), 1u);
    // Another header beside it is another object, and the program sees its value.
    EXPECT_EQ(exit_code_of(keeping, with_support("8", kind)), 1);
    EXPECT_EQ(keeping.support_objects(), 2u);
    EXPECT_EQ(exit_code_of(whole, with_support("8", kind)), 1);
    EXPECT_EQ(whole.support_objects(), 0u);
  }
}

TEST(SingleProgramExecutor, ACompileErrorFoundByTheSyntaxCheckReadsAsTheFullBuildsAndStopsIt) {
  ASSERT_TRUE(host::find_toolchain(host::CompilerKind::kGcc));
  PreparedCase c = with_support("7", host::CompilerKind::kGcc);
  c.sources = {{"broken.c", "int broken(void) { return 1 }\n"}};
  SingleProgramExecutor executor;
  const auto full = executor.run(std::span<const PreparedCase>(&c, 1));
  c.syntax_check_first = true;
  const auto checked = executor.run(std::span<const PreparedCase>(&c, 1));
  ASSERT_TRUE(full.front().settled && checked.front().settled);
  EXPECT_EQ(signature(*checked.front().settled), signature(*full.front().settled));
  EXPECT_EQ(checked.front().settled->kind(), VerdictKind::kCompileError);
  // A clean check goes on to the build and the run.
  PreparedCase clean = with_support("7", host::CompilerKind::kGcc);
  clean.syntax_check_first = true;
  EXPECT_EQ(exit_code_of(executor, clean), 0);
}

TEST(SingleProgramExecutor, ASupportFileThatNeedsTheCasesOwnFilesIsCompiledWithTheProgram) {
  SingleProgramExecutor keeping(/*keep_support_objects=*/true);
  PreparedCase c = with_support("7", host::CompilerKind::kTcc);
  // The header is the case's own, not a support file: alone, support.c does not compile.
  c.sources.push_back(c.support_sources.front());
  c.support_sources.erase(c.support_sources.begin());
  EXPECT_EQ(exit_code_of(keeping, c), 0);
  EXPECT_EQ(keeping.support_objects(), 0u);
}

TEST(SingleProgramExecutor, AStandInCompilersFindingIsJudgedAgainOnTheConfirmingCompilersProgram) {
  ASSERT_TRUE(host::find_toolchain(host::CompilerKind::kTcc));
  ASSERT_TRUE(host::find_toolchain(host::CompilerKind::kGcc));
  // The compilers say different things about the same mistake; the finding keeps gcc's words.
  const Case bad = with_fault("int x = ;");
  const Verdict by_tcc = judge_single(bad, host::CompilerKind::kTcc);
  const Verdict by_gcc = judge_single(bad, host::CompilerKind::kGcc);
  ASSERT_EQ(by_tcc.kind(), VerdictKind::kCompileError);
  ASSERT_NE(signature(by_tcc), signature(by_gcc));
  EXPECT_EQ(signature(judge_single(bad, host::CompilerKind::kTcc, host::CompilerKind::kGcc)),
            signature(by_gcc));
  // A pass is the stand-in's verdict.
  const Case good = prepared_seed_case();
  EXPECT_EQ(judge_single(good, host::CompilerKind::kTcc, host::CompilerKind::kGcc).kind(),
            VerdictKind::kPass);
}

// `check` in the seed case's library replaced by `instead`.
Case with_replaced(const std::string& check, const std::string& instead) {
  Case c = prepared_seed_case();
  bool found = false;
  for (auto& [name, text] : c.prepared.sources) {
    const auto at = text.find(check);
    if (name != "tvmgen_default_lib.c" || at == std::string::npos) continue;
    text.replace(at, check.size(), instead);
    found = true;
  }
  EXPECT_TRUE(found) << check;
  return c;
}

TEST(Harness, AnExecutorThatGoesOnAfterAFailedWorkspaceAllocationIsAFinding) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  const std::string check = "if (workspace == NULL) return -1;";
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_replaced(check, "if (workspace == NULL) return 0;"));
  cases.push_back(with_replaced(check, ""));
  const auto raws = run_batched(cases);
  ASSERT_EQ(raws.size(), 3u);
  EXPECT_EQ(judge(cases[0], raws[0]).kind(), VerdictKind::kPass);
  // The right executor: the allocation fault run returned the failure and made no call.
  const ParsedRun report = parse_harness_output(raws[0].run.stdout_text);
  ASSERT_FALSE(report.faults.empty());
  EXPECT_EQ(report.faults.back().fail_at, 0);
  EXPECT_NE(report.faults.back().rc, 0);
  EXPECT_EQ(report.faults.back().calls_after, 0);

  const Verdict lost = judge(cases[1], raws[1]);
  ASSERT_EQ(lost.kind(), VerdictKind::kErrorIgnored) << summary(lost);
  EXPECT_EQ(std::get<ErrorIgnored>(lost.detail).fail_at, 0);
  EXPECT_EQ(std::get<ErrorIgnored>(lost.detail).rc, 0);
  EXPECT_NE(summary(lost).find("the workspace allocation failed"), std::string::npos)
      << summary(lost);
  // Unchecked, the executor hands the kernels pointers near NULL.
  const Verdict unchecked = judge(cases[2], raws[2]);
  EXPECT_EQ(unchecked.kind(), VerdictKind::kCrash) << summary(unchecked);
}

// tcc accepts an unused parameter silently; the warnings oracle has gcc check the case too.
TEST(WarningsOracle, AnUnusedVariableIsACompileErrorOnlyInTheCasesThatAskForTheCheck) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  ASSERT_TRUE(host::find_toolchain(host::CompilerKind::kGcc) || host::find_toolchain(host::CompilerKind::kClang))
      << "the warnings oracle needs gcc or clang";
  std::vector<Case> cases;
  cases.push_back(with_fault("int aotfuzz_unused_local;"));
  cases.push_back(with_fault("int aotfuzz_unused_local;"));
  cases.push_back(prepared_seed_case());
  cases[0].prepared.check_warnings = true;
  cases[2].prepared.check_warnings = true;
  const auto raws = run_batched(cases);
  ASSERT_EQ(raws.size(), 3u);
  const Verdict warned = judge(cases[0], raws[0]);
  ASSERT_EQ(warned.kind(), VerdictKind::kCompileError) << summary(warned);
  EXPECT_EQ(warned.stage, Stage::kCodegen);
  const std::string& diagnostics = std::get<CompileError>(warned.detail).diagnostics;
  EXPECT_NE(diagnostics.find("aotfuzz_unused_local"), std::string::npos) << diagnostics;
  // Diagnostics name the generated files, not the temporary directory they were checked in.
  EXPECT_EQ(diagnostics.find("aotfuzz-warnings"), std::string::npos) << diagnostics;
  EXPECT_EQ(judge(cases[1], raws[1]).kind(), VerdictKind::kPass);
  EXPECT_EQ(judge(cases[2], raws[2]).kind(), VerdictKind::kPass);

  // The single-program path (aotfuzz run, replay, confirmation) agrees.
  SingleProgramExecutor single;
  const auto alone = single.run(std::span<const PreparedCase>(&cases[0].prepared, 1));
  EXPECT_EQ(signature(judge(cases[0], alone.front())), signature(warned));
}

TEST(BatchedExecutor, BatchedAndSingleProgramsGiveTheSameVerdictsForEveryCodegenBug) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  // The seed graph under every catalogue bug, with and without merging, in one batch.
  std::vector<Case> cases;
  for (const auto& row : aot::bug_table()) {
    for (bool merge : {true, false}) {
      Case c;
      c.module = seed_graph();
      c.options.aot.merge = merge;
      c.options.aot.bugs.enable(row.bug);
      const CaseResult alone = run_case(c.module, c.options);
      auto p = prepare_case(c.module, c.options, c.result);
      if (!p) {
        EXPECT_EQ(signature(c.result.verdict), signature(alone.verdict)) << row.name;
        continue;
      }
      c.prepared = std::move(*p);
      c.result.verdict = alone.verdict;  // kept aside until the batch has run
      cases.push_back(std::move(c));
    }
  }
  ASSERT_FALSE(cases.empty());
  std::vector<Verdict> alone;
  for (auto& c : cases) alone.push_back(c.result.verdict);
  const auto raws = run_batched(cases);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    EXPECT_EQ(signature(judge(cases[i], raws[i])), signature(alone[i]))
        << replay_flags(cases[i].options);
  }
}

// Generated graphs under every API, interface, storage and merge setting, prepared.
std::vector<Case> generated_cases(int count) {
  std::vector<Case> cases;
  generator::GenPolicy policy;
  policy.max_ops = 16;
  for (int i = 0; cases.size() < static_cast<std::size_t>(count) && i < 4 * count; ++i) {
    ir::Rng rng(static_cast<std::uint64_t>(1000 + i));
    Case c;
    c.module = generator::generate(policy, rng);
    c.options.aot.api = i % 3 == 0 ? aot::Options::Api::kPacked : aot::Options::Api::kUnpacked;
    if (i % 3 == 2) c.options.aot.interface = aot::Options::Interface::kC;
    c.options.aot.storage_reuse = i % 4 != 1;
    c.options.aot.merge = i % 5 != 2;
    auto p = prepare_case(c.module, c.options, c.result);
    if (!p) continue;
    c.prepared = std::move(*p);
    cases.push_back(std::move(c));
  }
  return cases;
}

TEST(BatchedExecutor, CasesCompiledAgainstTheSharedRuntimeGetTheWholeProgramsVerdicts) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  std::vector<Case> cases = generated_cases(60);
  ASSERT_GE(cases.size(), 40u);
  std::vector<PreparedCase> prepared;
  for (const auto& c : cases) prepared.push_back(c.prepared);
  BatchOptions whole_options;
  whole_options.shared_runtime = false;
  BatchedExecutor whole(whole_options);
  const auto expected = whole.run(prepared);
  // One case per program, as fuzz_differential runs them, then all in one.
  BatchedExecutor shared;
  std::vector<RawResult> one_by_one;
  for (const auto& p : prepared) one_by_one.push_back(shared.run({&p, 1}).front());
  const auto together = shared.run(prepared);
  // The prelude declares all that the generated C takes from the C library: no case needed the
  // whole program.
  EXPECT_EQ(shared.whole_program_retries(), 0);
  EXPECT_EQ(shared.runner_starts(), 1);
  for (std::size_t i = 0; i < cases.size(); ++i) {
    const std::string want = signature(judge(cases[i], expected[i]));
    EXPECT_EQ(signature(judge(cases[i], one_by_one[i])), want) << replay_flags(cases[i].options);
    EXPECT_EQ(signature(judge(cases[i], together[i])), want) << replay_flags(cases[i].options);
    EXPECT_EQ(one_by_one[i].run.stdout_text, expected[i].run.stdout_text);
  }
}

TEST(BatchedExecutor, ACaseThatDoesNotCompileAgainstTheSharedRuntimeIsJudgedOnTheWholeProgram) {
  if (!batched_tcc_available()) GTEST_FAIL() << "libtcc or aotfuzz-runner missing";
  // calloc is not among the prelude's declarations: the cases do not compile against the
  // shared runtime, and compile as one program with the system headers.
  std::vector<Case> cases;
  cases.push_back(with_fault("{ void* p = calloc(1, 1); free(p); }"));
  cases.push_back(with_fault("undeclared_function();"));
  cases[0].prepared.sources.back().second.insert(0, "#include <stdlib.h>\n");
  std::vector<PreparedCase> prepared;
  for (const auto& c : cases) prepared.push_back(c.prepared);
  BatchedExecutor executor;
  const auto raws = executor.run(prepared);
  EXPECT_EQ(judge(cases[0], raws[0]).kind(), VerdictKind::kPass);
  const Verdict broken = judge(cases[1], raws[1]);
  EXPECT_EQ(broken.kind(), VerdictKind::kCompileError);
  // The diagnostics are the whole program's, as without the shared runtime.
  EXPECT_EQ(summary(broken).find("runtime:"), std::string::npos) << summary(broken);
  EXPECT_GE(executor.whole_program_retries(), 1);
}

TEST(BatchedExecutor, GccBuildsTheBatchAsASharedObjectWithTheSameVerdicts) {
  if (!host::find_toolchain(host::CompilerKind::kGcc) || runner_path().empty()) {
    GTEST_FAIL() << "gcc or aotfuzz-runner missing";
  }
  std::vector<Case> cases;
  cases.push_back(prepared_seed_case());
  cases.push_back(with_fault("*(volatile int*)0 = 1;"));
  cases.push_back(prepared_seed_case());
  BatchOptions options;
  options.compiler = host::CompilerKind::kGcc;
  const auto raws = run_batched(cases, options);
  EXPECT_EQ(judge(cases[0], raws[0]).kind(), VerdictKind::kPass);
  EXPECT_EQ(judge(cases[1], raws[1]).kind(), VerdictKind::kCrash);
  EXPECT_EQ(judge(cases[2], raws[2]).kind(), VerdictKind::kPass);
  // The compiler's run is the cases' compile phase (shared among them), not only the load of
  // the shared object: a gcc process takes milliseconds, a dlopen of this object far less.
  std::chrono::microseconds compile{0};
  for (const auto& r : raws) compile += r.compile_time;
  EXPECT_GE(compile, std::chrono::milliseconds(5));
}

TEST(BatchProgram, PrefixesEveryCaseNameButNotTheCallTraceStrings) {
  Case c = prepared_seed_case();
  const PreparedCase* both[] = {&c.prepared, &c.prepared};
  const std::string program = batch_program_c(both);
  EXPECT_NE(program.find("c0_tvmgen_default_run("), std::string::npos);
  EXPECT_NE(program.find("c1_tvmgen_default_run("), std::string::npos);
  EXPECT_NE(program.find("c1_aotfuzz_case_entry"), std::string::npos);
  // Trace names are the case's own (string literals are not renamed).
  EXPECT_NE(program.find("\"tvmgen_default_"), std::string::npos);
  EXPECT_EQ(program.find("\"c0_tvmgen"), std::string::npos);
  EXPECT_EQ(program.find("#include \"tvmgen_default.h\""), std::string::npos);
}

TEST(BatchProgram, TheSharedRuntimesCasePreludeAgreesWithTheSystemHeaders) {
  // Declarations that differ from glibc's are conflicting types in the same translation unit.
  const std::string unit = harness_case_prelude_c() +
                           "#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n"
                           "#include <string.h>\n" +
                           "int aotfuzz_harness_run_case(const struct aotfuzz_harness_case* c, "
                           "const uint8_t* const* input_data) { (void)c; (void)input_data; "
                           "return 0; }\nint main(void) { return 0; }\n";
  host::TempDir dir("aotfuzz-prelude-test");
  std::ofstream(dir.file("prelude.c")) << unit;
  int checked = 0;
  for (host::CompilerKind kind : {host::CompilerKind::kGcc, host::CompilerKind::kTcc}) {
    const auto tc = host::find_toolchain(kind);
    if (!tc) continue;
    host::CompileOptions o;
    o.defines = {"AOTFUZZ_TRACE"};
    const auto r = compile(*tc, {dir.file("prelude.c").string()}, dir.file("p").string(), o);
    EXPECT_TRUE(r.ok()) << host::compiler_kind_name(kind) << ": " << r.diagnostics;
    ++checked;
  }
  EXPECT_GE(checked, 1) << "neither gcc nor tcc found";
  // And every name the cases take from outside is declared by the prelude.
  for (const auto& name : harness_runtime_symbols()) {
    EXPECT_NE(harness_case_prelude_c().find(name), std::string::npos) << name;
  }
}

TEST(RunnerProtocol, RequestsAndResultsSurviveEncoding) {
  runner::BatchRequest q;
  q.program = std::string("int x;\0y", 8);
  q.tcc_options = "-Wall";
  q.runtime = "int shared;";
  q.runtime_symbols = {"shared", "memset"};
  q.cases = {{3, 100, 2, 1 << 20, 0, 77, {"ab", std::string("\0\1", 2), ""}}};
  const auto back = runner::decode_request(runner::encode(q));
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->program, q.program);
  EXPECT_EQ(back->runtime, q.runtime);
  EXPECT_EQ(back->runtime_symbols, q.runtime_symbols);
  EXPECT_EQ(back->cases[0].index, 3);
  EXPECT_EQ(back->cases[0].output_cap, 77u);
  EXPECT_EQ(back->cases[0].inputs, q.cases[0].inputs);
  runner::BatchResult r;
  r.compile = runner::BatchResult::Compile::kOk;
  runner::CaseOutcome o;
  o.end = runner::ChildEnd::kSignaled;
  o.signal = 11;
  o.flood = true;
  o.stdout_text = "AOTFUZZ run 1\n";
  r.cases.push_back(o);
  const auto rb = runner::decode_result(runner::encode(r));
  ASSERT_TRUE(rb.has_value());
  EXPECT_EQ(rb->cases[0].signal, 11);
  EXPECT_TRUE(rb->cases[0].flood);
  EXPECT_EQ(rb->cases[0].stdout_text, o.stdout_text);
  EXPECT_FALSE(runner::decode_result("garbage").has_value());
  EXPECT_FALSE(runner::decode_request(runner::encode(r)).has_value());
}

}  // namespace
}  // namespace aotfuzz::oracle

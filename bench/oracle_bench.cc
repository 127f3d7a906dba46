// Cost of the out-of-process tier: compiling a trivial C program with each compiler, running it,
// and both together (docs/design.md, "Performance design").
#include <benchmark/benchmark.h>

#include <sys/resource.h>

#include <fstream>

#include "aot/runtime_header.h"
#include "host/process.h"
#include "host/tempdir.h"
#include "host/toolchain.h"

namespace {

using namespace aotfuzz;

constexpr const char* kTrivial = R"(#include "aotfuzz_runtime.h"
#include <stdio.h>
AOTFUZZ_DEFINE_TRACE_FILE;
static int32_t f(TVMValue* args, int* codes, int num_args, TVMValue* ret, int* ret_code,
                 void* resource) {
  AOTFUZZ_TRACE_CALL("f", num_args);
  (void)args; (void)codes; (void)ret; (void)ret_code; (void)resource;
  return 0;
}
int main(void) {
  TVMValue v[1];
  int c[1] = {kTVMNullptr};
  TVMValue r;
  int rc = 0;
  v[0].v_handle = NULL;
  printf("%d\n", (int)f(v, c, 1, &r, &rc, NULL));
  return 0;
}
)";

// A directory with the trivial program and the runtime header, shared by the benchmarks.
struct Fixture {
  host::TempDir dir{"aotfuzz-bench"};
  std::string source;
  Fixture() {
    std::ofstream(dir.file(aotfuzz::aot::kRuntimeHeaderName), std::ios::binary)
        << aotfuzz::aot::runtime_header_text();
    source = dir.file("trivial.c").string();
    std::ofstream(source) << kTrivial;
  }
  host::CompileOptions options() const {
    host::CompileOptions o;
    o.include_dirs.push_back(dir.path().string());
    return o;
  }
};

// CPU seconds used by reaped children so far: unlike wall time, barely affected by other load on
// the machine, so it is reported as a counter next to the wall-clock time.
double children_cpu_seconds() {
  rusage ru{};
  ::getrusage(RUSAGE_CHILDREN, &ru);
  return static_cast<double>(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
         static_cast<double>(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

// Reports the children's CPU milliseconds per iteration since `start`.
void report_child_cpu(benchmark::State& state, double start) {
  state.counters["child_cpu_ms"] = benchmark::Counter((children_cpu_seconds() - start) * 1e3 /
                                                      static_cast<double>(state.iterations()));
}

Fixture& fixture() {
  static Fixture f;
  return f;
}

void compile_or_skip(benchmark::State& state, const std::optional<host::Toolchain>& tc,
                     const std::string& exe) {
  host::CompileResult r = compile(*tc, {fixture().source}, exe, fixture().options());
  if (!r.ok()) state.SkipWithError(("compile failed: " + r.message).c_str());
}

void BM_Compile(benchmark::State& state) {
  auto kind = static_cast<host::CompilerKind>(state.range(0));
  auto tc = host::find_toolchain(kind);
  if (!tc) {
    state.SkipWithError("compiler not installed");
    return;
  }
  state.SetLabel(std::string(host::compiler_kind_name(kind)));
  std::string exe = fixture().dir.file("c_" + std::string(host::compiler_kind_name(kind))).string();
  double cpu0 = children_cpu_seconds();
  for (auto _ : state) compile_or_skip(state, tc, exe);
  report_child_cpu(state, cpu0);
}

void BM_Run(benchmark::State& state) {
  auto tc = host::default_toolchain();
  if (!tc) {
    state.SkipWithError("no compiler installed");
    return;
  }
  std::string exe = fixture().dir.file("r").string();
  compile_or_skip(state, tc, exe);
  double cpu0 = children_cpu_seconds();
  for (auto _ : state) {
    host::RunResult r = host::run_process({exe});
    if (!r.exited_ok()) state.SkipWithError("run failed");
  }
  report_child_cpu(state, cpu0);
}

void BM_CompileAndRun(benchmark::State& state) {
  auto kind = static_cast<host::CompilerKind>(state.range(0));
  auto tc = host::find_toolchain(kind);
  if (!tc) {
    state.SkipWithError("compiler not installed");
    return;
  }
  state.SetLabel(std::string(host::compiler_kind_name(kind)));
  std::string exe = fixture().dir.file("cr_" + std::string(host::compiler_kind_name(kind))).string();
  double cpu0 = children_cpu_seconds();
  for (auto _ : state) {
    compile_or_skip(state, tc, exe);
    host::RunResult r = host::run_process({exe});
    if (!r.exited_ok()) state.SkipWithError("run failed");
  }
  report_child_cpu(state, cpu0);
}

#define AOTFUZZ_COMPILERS                           \
  Arg(static_cast<int>(host::CompilerKind::kTcc))         \
      ->Arg(static_cast<int>(host::CompilerKind::kGcc))   \
      ->Arg(static_cast<int>(host::CompilerKind::kClang)) \
      ->Unit(benchmark::kMillisecond)               \
      ->UseRealTime()

BENCHMARK(BM_Compile)->AOTFUZZ_COMPILERS;
BENCHMARK(BM_Run)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_CompileAndRun)->AOTFUZZ_COMPILERS;

}  // namespace

BENCHMARK_MAIN();

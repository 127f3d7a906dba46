// Tests of the C runtime header: it must compile warning-free under every supported C compiler,
// carry TVM's type-code values and layouts, and record dynamic call arities when tracing.
#include <gtest/gtest.h>

#include "aot/runtime_header.h"
#include "host/process.h"
#include "host/tempdir.h"
#include "host/toolchain.h"
#include "tests/support/files.h"
#include "tests/support/processes.h"

namespace aotfuzz::oracle {
namespace {

using test_support::toolchain_of;
using test_support::write_file;

// Uses every declaration of the header the way generated code and harnesses will. The checks
// compare against TVM v0.8's c_runtime_api.h / DLPack values, written out here independently.
constexpr const char* kUser = R"(#include "aotfuzz_runtime.h"
#include <signal.h>
#include <stdio.h>
#include <string.h>

AOTFUZZ_DEFINE_TRACE_FILE;

static int32_t add_one(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code,
                       void* resource) {
  DLTensor* t;
  float* data;
  int64_t i;
  AOTFUZZ_TRACE_CALL("add_one", num_args);
  (void)type_codes;
  (void)ret;
  (void)ret_code;
  (void)resource;
  t = (DLTensor*)args[0].v_handle;
  data = (float*)t->data;
  for (i = 0; i < t->shape[0]; ++i) data[i] += 1.0f;
  return 0;
}

int main(int argc, char** argv) {
  float buf[3] = {1.0f, 2.0f, 3.0f};
  int64_t shape[1] = {3};
  DLTensor t;
  TVMValue args[2];
  int codes[2] = {kTVMDLTensorHandle, kTVMNullptr};
  TVMValue ret;
  int ret_code = 0;
  TVMBackendPackedCFunc f = add_one;
  int bad = 0;
#ifdef AOTFUZZ_TRACE
  aotfuzz_trace_file = stdout;
#endif
  memset(&t, 0, sizeof t);
  t.data = buf;
  t.device.device_type = kDLCPU;
  t.device.device_id = 0;
  t.ndim = 1;
  t.dtype.code = kDLFloat;
  t.dtype.bits = 32;
  t.dtype.lanes = 1;
  t.shape = shape;
  t.strides = NULL;
  t.byte_offset = 0;
  args[0].v_handle = &t;
  args[1].v_int64 = 0;
  if (f(args, codes, 1, &ret, &ret_code, NULL) != 0) return 10;
  if (f(args, codes, 2, &ret, &ret_code, NULL) != 0) return 11;
  if (buf[0] != 3.0f || buf[2] != 5.0f) return 12;
  bad |= kTVMArgInt != 0 || kTVMArgFloat != 2 || kTVMOpaqueHandle != 3 || kTVMNullptr != 4;
  bad |= kTVMDataType != 5 || kDLDevice != 6 || kTVMDLTensorHandle != 7 || kTVMStr != 11;
  bad |= kDLInt != 0 || kDLUInt != 1 || kDLFloat != 2 || kDLCPU != 1;
  bad |= sizeof(DLDataType) != 4 || sizeof(TVMValue) != 8;
  if (bad) return 13;
  if (argc > 1 && strcmp(argv[1], "crash") == 0) {
    f(args, codes, 1, &ret, &ret_code, NULL);
    raise(SIGSEGV);
  }
  return 0;
}
)";

class RuntimeHeader : public ::testing::TestWithParam<host::CompilerKind> {
 protected:
  // Compiles kUser against the written header with -pedantic -Werror; returns the executable.
  std::string build(bool trace) {
    const auto& tc = toolchain_of(GetParam());
    write_file(dir_.file(aot::kRuntimeHeaderName), std::string(aot::runtime_header_text()));
    write_file(dir_.file("user.c"), kUser);
    host::CompileOptions options;
    options.include_dirs.push_back(dir_.path().string());
    if (GetParam() != host::CompilerKind::kTcc) options.extra_flags = {"-pedantic", "-pedantic-errors"};
    if (trace) options.defines.push_back("AOTFUZZ_TRACE");
    std::string exe = dir_.file(trace ? "user_trace" : "user").string();
    host::CompileResult r = compile(*tc, {dir_.file("user.c").string()}, exe, options);
    EXPECT_EQ(r.status, host::CompileStatus::kOk) << r.message << "\n" << r.diagnostics;
    EXPECT_EQ(r.diagnostics, "") << "the header must compile without any warning";
    return exe;
  }
  void SetUp() override {
    if (!toolchain_of(GetParam())) {
      GTEST_SKIP() << host::compiler_kind_name(GetParam()) << " is not installed on this machine";
    }
  }
  host::TempDir dir_{"aotfuzz-test-header"};
};

TEST_P(RuntimeHeader, CompilesWarningFreeAndMatchesTvmValues) {
  std::string exe = build(false);
  host::RunResult r = host::run_process({exe});
  EXPECT_TRUE(r.exited_ok()) << r.describe() << "\n" << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "") << "without AOTFUZZ_TRACE nothing is traced";
}

TEST_P(RuntimeHeader, TraceRecordsEveryCallWithItsArgumentCount) {
  std::string exe = build(true);
  host::RunResult r = host::run_process({exe});
  EXPECT_TRUE(r.exited_ok()) << r.describe() << "\n" << r.stderr_text;
  EXPECT_EQ(r.stdout_text, "add_one 1\nadd_one 2\n");
}

TEST_P(RuntimeHeader, TraceSurvivesACrash) {
  std::string exe = build(true);
  host::RunResult r = host::run_process({exe, "crash"});
  EXPECT_EQ(r.kind, host::ExitKind::kSignaled) << r.describe();
  EXPECT_EQ(r.signal, SIGSEGV);
  EXPECT_EQ(r.stdout_text, "add_one 1\nadd_one 2\nadd_one 1\n");
}

INSTANTIATE_TEST_SUITE_P(AllCompilers, RuntimeHeader,
                         ::testing::Values(host::CompilerKind::kTcc, host::CompilerKind::kGcc,
                                           host::CompilerKind::kClang),
                         [](const auto& info) {
                           return std::string(host::compiler_kind_name(info.param));
                         });

TEST(RuntimeHeaderText, IsGuardedUnderItsIncludeName) {
  EXPECT_EQ(aot::kRuntimeHeaderName, "aotfuzz_runtime.h");
  EXPECT_NE(aot::runtime_header_text().find("#ifndef AOTFUZZ_RUNTIME_H_"), std::string::npos);
}

}  // namespace
}  // namespace aotfuzz::oracle

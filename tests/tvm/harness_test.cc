// The harness around TVM's C interface (tvm/harness.h): the entry point is called with the
// parameters its header declares, and the program runs, with stand-ins for TVM's generated C
// whose headers are in the form interface_c.cc emits (external pools, workspace-io).
#include "tvm/harness.h"

#include <gtest/gtest.h>

#include <cstring>
#include <span>
#include <string>
#include <vector>

#include "oracle/executor.h"
#include "oracle/harness.h"
#include "tests/support/modules.h"

namespace aotfuzz::tvm {
namespace {

const char* const kGraph = R"(def @main(%x: Tensor[(4), float32], %y: Tensor[(4), float32]) {
  add(%x, %y)
})";

std::vector<std::uint8_t> floats(std::vector<float> values) {
  std::vector<std::uint8_t> out(values.size() * 4);
  std::memcpy(out.data(), values.data(), out.size());
  return out;
}

// The header of a module with an external workspace pool of 16 bytes and a constant pool of two
// floats (1 and 2), as interface_c.cc writes it (its comments left out).
constexpr const char* kPoolsHeader = R"(#ifndef TVMGEN_DEFAULT_H_
#define TVMGEN_DEFAULT_H_
#include <stdint.h>

struct tvmgen_default_inputs {
  void* x;
  void* y;
};

struct tvmgen_default_outputs {
  void* output;
};

struct tvmgen_default_workspace_pools {
  void* aotfuzz_workspace;
  void* aotfuzz_constants;
};

int32_t tvmgen_default_run(
  struct tvmgen_default_inputs* inputs,
  struct tvmgen_default_outputs* outputs,
  struct tvmgen_default_workspace_pools* workspace_pools
);
#define TVMGEN_DEFAULT_WORKSPACE_SIZE 0
#define TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE 16
#define TVMGEN_DEFAULT_AOTFUZZ_CONSTANTS_CONSTANT_POOL_SIZE 8
#define TVMGEN_DEFAULT_AOTFUZZ_CONSTANTS_CONSTANT_POOL_DATA \
    0x00, 0x00, 0x80, 0x3f, 0x00, 0x00, 0x00, 0x40\


#endif // TVMGEN_DEFAULT_H_
)";

// (x + y) through the workspace pool, times the constant pool's floats in turn; 7 when the
// workspace pool is less aligned than ALIGN.
constexpr const char* kPoolsModel = R"(#include <stdint.h>
#include "tvmgen_default.h"
int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs,
                           struct tvmgen_default_outputs* outputs,
                           struct tvmgen_default_workspace_pools* workspace_pools) {
  float* scratch = (float*)workspace_pools->aotfuzz_workspace;
  const float* c = (const float*)workspace_pools->aotfuzz_constants;
  const float* x = (const float*)inputs->x;
  const float* y = (const float*)inputs->y;
  float* out = (float*)outputs->output;
  int i;
  if ((uintptr_t)scratch % ALIGN != 0) return 7;
  for (i = 0; i < 4; ++i) scratch[i] = x[i] + y[i];
  for (i = 0; i < 4; ++i) out[i] = scratch[i] * c[i % 2];
  return 0;
}
)";

// workspace-io: the inputs and outputs live in the one pool, where map_inputs/map_outputs say.
constexpr const char* kWorkspaceIoHeader = R"(#ifndef TVMGEN_DEFAULT_H_
#define TVMGEN_DEFAULT_H_
#include <stdint.h>

struct tvmgen_default_inputs {
  void* x;
  void* y;
};

struct tvmgen_default_outputs {
  void* output;
};

struct tvmgen_default_workspace_pools {
  void* aotfuzz_workspace;
};

struct tvmgen_default_inputs tvmgen_default_map_inputs(
  struct tvmgen_default_workspace_pools* workspace_pools
);

struct tvmgen_default_outputs tvmgen_default_map_outputs(
  struct tvmgen_default_workspace_pools* workspace_pools
);

int32_t tvmgen_default_run(
  struct tvmgen_default_workspace_pools* workspace_pools
);
#define TVMGEN_DEFAULT_WORKSPACE_SIZE 0
#define TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE 48

#endif // TVMGEN_DEFAULT_H_
)";

constexpr const char* kWorkspaceIoModel = R"(#include <stdint.h>
#include "tvmgen_default.h"
struct tvmgen_default_inputs tvmgen_default_map_inputs(
    struct tvmgen_default_workspace_pools* workspace_pools) {
  struct tvmgen_default_inputs i = {&((uint8_t*)workspace_pools->aotfuzz_workspace)[0],
                                    &((uint8_t*)workspace_pools->aotfuzz_workspace)[16]};
  return i;
}
struct tvmgen_default_outputs tvmgen_default_map_outputs(
    struct tvmgen_default_workspace_pools* workspace_pools) {
  struct tvmgen_default_outputs o = {&((uint8_t*)workspace_pools->aotfuzz_workspace)[32]};
  return o;
}
int32_t tvmgen_default_run(struct tvmgen_default_workspace_pools* workspace_pools) {
  const float* x = (const float*)&((uint8_t*)workspace_pools->aotfuzz_workspace)[0];
  const float* y = (const float*)&((uint8_t*)workspace_pools->aotfuzz_workspace)[16];
  float* out = (float*)&((uint8_t*)workspace_pools->aotfuzz_workspace)[32];
  int i;
  for (i = 0; i < 4; ++i) out[i] = x[i] + y[i];
  return 0;
}
)";

// The program of `header` and `model` under the harness, run; its report.
oracle::ParsedRun run_with_header(const std::string& header, const std::string& model,
                                  const oracle::MemoryOptions& memory) {
  const ir::Module m = test_support::parse_verified(kGraph);
  aot::Options options;
  options.interface = aot::Options::Interface::kC;
  options.api = aot::Options::Api::kUnpacked;
  const ir::Type t = m.main()->params()[0]->type();
  const auto inputs =
      oracle::harness_inputs(m, {reference::Value::tensor(t, floats({1, 2, 3, 4})),
                                 reference::Value::tensor(t, floats({1, 1, 1, 1}))});
  const auto call =
      tvm_c_interface_call(m, options, memory, read_interface_header(header, "tvmgen_default"));
  oracle::PreparedCase c;
  c.mod_name = "default";
  c.header_name = "tvmgen_default.h";
  c.sources = {{"tvmgen_default.h", header}, {"model.c", model}};
  c.support_sources = {
      {"aotfuzz_harness.c", oracle::foreign_harness_support_c("/* support */\n", "", "")}};
  c.main_c = oracle::foreign_harness_case_c(
      "/* main */\n", "", "\n#include \"tvmgen_default.h\"\n\n",
      oracle::harness_inputs_c(inputs) + oracle::harness_code_c(m, options, inputs, call));
  c.defines = {"ALIGN=" + std::to_string(memory.workspace_alignment)};
  c.compiler = host::CompilerKind::kGcc;
  c.limits.timeout = std::chrono::milliseconds(5'000);
  oracle::SingleProgramExecutor executor;
  const auto raws = executor.run(std::span<const oracle::PreparedCase>(&c, 1));
  EXPECT_FALSE(raws.front().settled) << oracle::summary(*raws.front().settled);
  EXPECT_EQ(raws.front().run.exit_code, 0)
      << raws.front().run.stdout_text << raws.front().run.stderr_text;
  return oracle::parse_harness_output(raws.front().run.stdout_text);
}

TEST(TvmCInterfaceCall, PassesTheExternalPoolsTheHeaderDeclaresFilledAndAligned) {
  for (int alignment : {8, 16, 64}) {
    SCOPED_TRACE(alignment);
    oracle::MemoryOptions memory;
    memory.usmp = true;
    memory.pools = oracle::MemoryOptions::Pools::kExternal;
    memory.workspace_alignment = alignment;
    const oracle::ParsedRun run = run_with_header(kPoolsHeader, kPoolsModel, memory);
    EXPECT_TRUE(run.completed);
    EXPECT_EQ(run.rcs, (std::vector<int>{0, 0}));
    ASSERT_EQ(run.outputs.size(), 1u);
    EXPECT_EQ(run.outputs[0], floats({2, 6, 4, 10}));
    EXPECT_TRUE(run.unwritten.empty());
  }
}

TEST(TvmCInterfaceCall, WithWorkspaceIoCopiesInputsAndOutputsThroughTheMappedPointers) {
  oracle::MemoryOptions memory;
  memory.usmp = true;
  memory.pools = oracle::MemoryOptions::Pools::kExternal;
  memory.workspace_io = true;
  const oracle::ParsedRun run = run_with_header(kWorkspaceIoHeader, kWorkspaceIoModel, memory);
  EXPECT_TRUE(run.completed);
  EXPECT_EQ(run.rcs, (std::vector<int>{0, 0}));
  ASSERT_EQ(run.outputs.size(), 1u);
  EXPECT_EQ(run.outputs[0], floats({2, 3, 4, 5}));
  EXPECT_TRUE(run.unwritten.empty());
}

TEST(TvmCInterfaceCall, AnOutputTheModelNeverWritesInThePoolShowsAsUnwritten) {
  std::string model = kWorkspaceIoModel;
  const std::string loop = "i < 4; ++i) out[i]";
  model.replace(model.find(loop), loop.size(), "i < 0; ++i) out[i]");
  oracle::MemoryOptions memory;
  memory.usmp = true;
  memory.workspace_io = true;
  const oracle::ParsedRun run = run_with_header(kWorkspaceIoHeader, model, memory);
  ASSERT_EQ(run.unwritten.size(), 1u);
  EXPECT_EQ(run.unwritten[0].first, 0);
}

TEST(TvmCInterfaceCall, MorePoolsThanTheHarnessHasAreAHeaderError) {
  const ir::Module m = test_support::parse_verified(kGraph);
  InterfaceHeader h = read_interface_header(kPoolsHeader, "tvmgen_default");
  h.pools.resize(9, h.pools.front());
  EXPECT_THROW(tvm_c_interface_call(m, aot::Options{}, oracle::MemoryOptions{}, h), HeaderError);
}

}  // namespace
}  // namespace aotfuzz::tvm

// The pool-plan oracle (tvm/pool_plan.h) on plans and C text in the forms TVM v0.18.0 writes:
// ConvertPoolAllocationsToOffsets' lets as CodeGenC prints them, AoT's calls (unpacked
// `if (f(...) != 0 ) return -1;`, packed through stack_value), SourceModule's internal pool
// array, InterfaceCNode's macros and Model Library Format's metadata.json.
#include "tvm/pool_plan.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace aotfuzz::tvm {
namespace {

using nlohmann::json;
using oracle::PoolMisaligned;
using oracle::PoolOverlap;
using oracle::PoolSizeDisagreement;
using oracle::PoolTooSmall;
using oracle::WorkspaceLeftover;
using Files = std::vector<std::pair<std::string, std::string>>;

json buffer(const std::string& name, int size, int offset, std::vector<std::string> conflicts,
            const std::string& pool = "global_workspace", int alignment = 8) {
  return {{"name", name}, {"size", size},     {"alignment", alignment},
          {"pool", pool}, {"offset", offset}, {"conflicts", conflicts}};
}

json plan_of(std::vector<json> buffers, int pool_size, const std::string& pool = "global_workspace",
             bool internal = true) {
  return {{"algorithm", "greedy_by_conflicts"},
          {"buffers", buffers},
          {"pools",
           {{{"name", pool}, {"internal", internal}, {"constant", false}, {"size", pool_size}}}}};
}

// The #9036 seed graph as TVM v0.18.0 builds it with merging and USMP (unpacked API): the
// merged external function writes sid_1 and sid_2, the host kernel reads both.
std::string seed_main(int sid_1, int sid_2) {
  return "#include \"tvm/runtime/c_runtime_api.h\"\n"
         "#ifdef __cplusplus\nextern \"C\"\n#endif\n"
         "TVM_DLL int32_t tvmgen_default_fused_add(float* p0, float* p1, float* T_add, uint8_t* "
         "global_workspace_2_var);\n"
         "TVM_DLL int32_t tvmgen_default___tvm_main__(float* x_buffer_var,float* w0_buffer_var,"
         "float* w1_buffer_var,float* output_buffer_var,uint8_t* global_workspace_0_var) {\n"
         "  void* sid_1_let = (&(global_workspace_0_var[" +
         std::to_string(sid_1) +
         "]));\n"
         "  void* sid_2_let = (&(global_workspace_0_var[" +
         std::to_string(sid_2) +
         "]));\n"
         "  if (tvmgen_default_ccompiler_main_0(x_buffer_var, w0_buffer_var, w1_buffer_var, "
         "sid_1_let, sid_2_let) != 0 ) return -1;\n"
         "  if (tvmgen_default_fused_add(sid_1_let, sid_2_let, output_buffer_var, "
         "global_workspace_0_var) != 0 ) return -1;\n"
         "  return 0;\n}\n"
         "TVM_DLL int32_t tvmgen_default_fused_add(float* p0, float* p1, float* T_add, uint8_t* "
         "global_workspace_2_var) {\n"
         "  for (int32_t ax0 = 0; ax0 < 8; ++ax0) {\n"
         "    T_add[ax0] = (p0[ax0] + p1[ax0]);\n  }\n  return 0;\n}\n";
}

std::string lib0(int pool_size) {
  return "#include \"tvm/runtime/c_runtime_api.h\"\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n"
         "__attribute__((section(\".bss.noinit.tvm\"), aligned(8)))\n"
         "static uint8_t global_workspace[" +
         std::to_string(pool_size) +
         "];\n"
         "#include <tvmgen_default.h>\n"
         "TVM_DLL int32_t tvmgen_default___tvm_main__(void* x,void* w0,void* w1,void* "
         "output0,uint8_t* global_workspace_0_var);\n"
         "int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs,struct "
         "tvmgen_default_outputs* outputs) {return tvmgen_default___tvm_main__(inputs->x,"
         "inputs->w0,inputs->w1,outputs->output,((uint8_t*)&global_workspace));\n}\n"
         "#ifdef __cplusplus\n}\n#endif\n;";
}

std::string metadata(int workspace) {
  return json{{"modules",
               {{"default",
                 {{"memory",
                   {{"functions",
                     {{"main",
                       {{{"device", 1},
                         {"workspace_size_bytes", workspace},
                         {"constants_size_bytes", 0},
                         {"io_size_bytes", 96}}}},
                      {"operator_functions",
                       {{{"function_name", "tvmgen_default_fused_add"},
                         {"workspace", {{{"device", 1}, {"workspace_size_bytes", 0}}}}}}}}}}}}}}}}
      .dump();
}

const std::string kCrt =
    "int TVMBackendFreeWorkspace(int device_type, int device_id, void* ptr);\n"
    "void* TVMBackendAllocWorkspace(int device_type, int device_id, uint64_t nbytes,\n"
    "                               int dtype_code_hint, int dtype_bits_hint) {\n"
    "  void* ptr = 0;\n  return ptr;\n}\n";

Files files(const std::string& lib1, int pool_size) {
  return {{"default_lib0.c", lib0(pool_size)},
          {"default_lib1.c", lib1},
          {"crt_backend_api.c", kCrt},
          {"crt_config.h", "#define TVM_CRT_MAX_ARGS 10\n"}};
}

oracle::CaseOptions usmp_options() {
  oracle::CaseOptions o;
  o.memory.usmp = true;
  o.memory.workspace_alignment = 8;
  return o;
}

// sid_1 and sid_2 are live at once from the first call to the second: TVM lists the conflict.
json seed_plan(int sid_1, int sid_2, int pool_size) {
  return plan_of({buffer("sid_1", 32, sid_1, {"sid_2"}), buffer("sid_2", 32, sid_2, {"sid_1"})},
                 pool_size);
}

TEST(PoolPlan, AcceptsACleanPlanThatTvmsCHeaderAndMetadataAgreeWith) {
  const auto v = judge_pool_plan(seed_plan(0, 32, 64), files(seed_main(0, 32), 64), metadata(64),
                                 usmp_options());
  EXPECT_EQ(v, std::nullopt) << oracle::summary(*v);
}

TEST(PoolPlan, FindsTwoConflictingBuffersAtOneOffsetAndNamesThePool) {
  const auto v = judge_pool_plan(seed_plan(0, 0, 32), files(seed_main(0, 0), 32), metadata(32),
                                 usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-overlap:codegen:global_workspace");
  EXPECT_EQ(oracle::exit_code(*v), 1);
  const auto& d = std::get<PoolOverlap>(v->detail);
  EXPECT_EQ(d.first, "sid_1");
  EXPECT_EQ(d.second, "sid_2");
  EXPECT_EQ(d.first_offset, 0);
  EXPECT_EQ(d.second_end, 32);
  EXPECT_TRUE(d.tvm_conflict);
  EXPECT_EQ(d.live_at_call, 1);
}

TEST(PoolPlan, FindsAPlanAsTheDebugFaultLeavesItWhetherOrNotTvmsCFollowsIt) {
  // --debug-fault usmp:overlap: the recording planner puts sid_2 where sid_1 is. TVM's C follows
  // the plan it was given; a recorder that only reported it would leave the C as it was.
  for (int c_offset : {0, 32}) {
    const auto v = judge_pool_plan(seed_plan(0, 0, 64), files(seed_main(0, c_offset), 64),
                                   metadata(64), usmp_options());
    ASSERT_TRUE(v.has_value()) << c_offset;
    EXPECT_EQ(oracle::signature(*v), "pool-overlap:codegen:global_workspace");
  }
}

// The host kernel the calls below go to, as CodeGenCHost defines it for the direct API.
std::string fused_add(const std::string& name = "fused_add") {
  return "TVM_DLL int32_t tvmgen_default_" + name +
         "(float* p0, float* p1, float* T_add, uint8_t* global_workspace_2_var) {\n"
         "  for (int32_t ax0 = 0; ax0 < 8; ++ax0) {\n"
         "    T_add[ax0] = (p0[ax0] + p1[ax0]);\n  }\n  return 0;\n}\n";
}

// Three calls: sid_1 is written by the first and read by the third; sid_2 is written by the
// second and read by the third. sid_1 is live across the second call.
std::string chain_main(int sid_1, int sid_2, const std::string& second = "ccompiler_main_1") {
  return "TVM_DLL int32_t tvmgen_default___tvm_main__(float* x_buffer_var,float* "
         "output_buffer_var,uint8_t* global_workspace_0_var) {\n"
         "  void* sid_1_let = (&(global_workspace_0_var[" +
         std::to_string(sid_1) +
         "]));\n"
         "  void* sid_2_let = (&(global_workspace_0_var[" +
         std::to_string(sid_2) +
         "]));\n"
         "  if (tvmgen_default_ccompiler_main_0(x_buffer_var, sid_1_let) != 0 ) return -1;\n"
         "  if (tvmgen_default_" +
         second +
         "(x_buffer_var, sid_2_let) != 0 ) return -1;\n"
         "  if (tvmgen_default_fused_add(sid_1_let, sid_2_let, output_buffer_var, "
         "global_workspace_0_var) != 0 ) return -1;\n"
         "  return 0;\n}\n" +
         fused_add();
}

TEST(PoolPlan, FindsAnOverlapTvmsConflictListMissesButTheCallOrderShows) {
  // A liveness bug: TVM's plan says sid_1 and sid_2 never live at once, and packs them together.
  const json plan = plan_of({buffer("sid_1", 32, 0, {}), buffer("sid_2", 32, 0, {})}, 32);
  const auto v = judge_pool_plan(plan, files(chain_main(0, 0), 32), metadata(32), usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-overlap:codegen:global_workspace");
  const auto& d = std::get<PoolOverlap>(v->detail);
  EXPECT_FALSE(d.tvm_conflict);
  EXPECT_EQ(d.live_at_call, 2);
  EXPECT_NE(oracle::summary(*v).find("only the executor's call order"), std::string::npos)
      << oracle::summary(*v);
}

// sid_1 is read by a call's callee that writes sid_2, and neither is used after or before it.
std::string handover_main(const std::string& callee) {
  return "TVM_DLL int32_t tvmgen_default___tvm_main__(float* x_buffer_var,float* "
         "output_buffer_var,uint8_t* global_workspace_0_var) {\n"
         "  void* sid_1_let = (&(global_workspace_0_var[0]));\n"
         "  void* sid_2_let = (&(global_workspace_0_var[0]));\n"
         "  if (tvmgen_default_ccompiler_main_0(x_buffer_var, sid_1_let) != 0 ) return -1;\n"
         "  if (tvmgen_default_" +
         callee +
         "(sid_1_let, sid_2_let, global_workspace_0_var) != 0 ) return -1;\n"
         "  if (tvmgen_default_ccompiler_main_2(sid_2_let, output_buffer_var) != 0 ) return -1;\n"
         "  return 0;\n}\n" +
         fused_add();
}

TEST(PoolPlan, LeavesAHostKernelsHandoverFromInputToOutputToTvmsConflictList) {
  // TVM sees the statements inside a host kernel: an input read only before the output is first
  // written may share its bytes. Not so an external function's, which TVM sees as one call.
  const json plan = plan_of({buffer("sid_1", 32, 0, {}), buffer("sid_2", 32, 0, {})}, 32);
  auto v =
      judge_pool_plan(plan, files(handover_main("fused_add"), 32), metadata(32), usmp_options());
  EXPECT_EQ(v, std::nullopt) << oracle::summary(*v);
  v = judge_pool_plan(plan, files(handover_main("ccompiler_main_1"), 32), metadata(32),
                      usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(std::get<PoolOverlap>(v->detail).live_at_call, 2);
}

TEST(PoolPlan, LeavesAUmaFunctionsHandoverToTvmsConflictListAsAHostKernels) {
  // A region a RelayToTIR hook lowered (UMA) is a PrimFunc of TVM's module: USMP follows its
  // loops as it follows a host kernel's.
  const json plan = plan_of({buffer("sid_1", 32, 0, {}), buffer("sid_2", 32, 0, {})}, 32);
  auto with_uma = files(handover_main("aotfuzz_uma_main_1"), 32);
  with_uma[1].second +=
      "TVM_DLL int32_t tvmgen_default_aotfuzz_uma_main_1(float* aotfuzz_uma_1_i0, float* "
      "T_add, uint8_t* global_workspace_1_var) {\n"
      "  for (int32_t ax0 = 0; ax0 < 8; ++ax0) {\n"
      "    T_add[ax0] = (aotfuzz_uma_1_i0[ax0] + aotfuzz_uma_1_i0[ax0]);\n"
      "  }\n"
      "  return 0;\n}\n";
  const auto v = judge_pool_plan(plan, with_uma, metadata(32), usmp_options());
  EXPECT_EQ(v, std::nullopt) << oracle::summary(*v);
}

TEST(PoolPlan, ReadsTheCallsOfThePackedApiThroughTheirStackArrays) {
  const std::string main =
      "TVM_DLL int32_t tvmgen_default___tvm_main__(void* args, int32_t* arg_type_ids, int32_t "
      "num_args, void* out_ret_value, int32_t* out_ret_tcode, void* resource_handle) {\n"
      "  void* global_workspace_0_var_1 = (((DLTensor*)global_workspace_0_var)[0].data);\n"
      "  void* stack_array = (&(global_workspace_0_var[96]));\n"
      "  void* sid_1_let = (&(((uint8_t*)global_workspace_0_var_1)[0]));\n"
      "  void* sid_2_let = (&(((uint8_t*)global_workspace_0_var_1)[32]));\n"
      "  (((DLTensor*)stack_array)[0].data) = x_buffer_var;\n"
      "  (((DLTensor*)stack_array)[1].data) = sid_1_let;\n"
      "  (((TVMValue*)stack_value)[1].v_handle) = (((DLTensor*)stack_array) + 1);\n"
      "  TVMValue ret_val;\n  int ret_type_code;\n"
      "  if (tvmgen_default_ccompiler_main_0( (TVMValue*) stack_value , (int*) stack_tcode, 2, "
      "&ret_val, &ret_type_code, NULL) != 0){\n    return -1;\n  }\n"
      "  (((DLTensor*)stack_array)[0].data) = x_buffer_var;\n"
      "  (((DLTensor*)stack_array)[1].data) = sid_2_let;\n"
      "  TVMValue ret_val_1;\n  int ret_type_code_1;\n"
      "  if (tvmgen_default_ccompiler_main_1( (TVMValue*) stack_value , (int*) stack_tcode, 2, "
      "&ret_val_1, &ret_type_code_1, NULL) != 0){\n    return -1;\n  }\n"
      "  (((DLTensor*)stack_array)[0].data) = sid_1_let;\n"
      "  (((DLTensor*)stack_array)[1].data) = sid_2_let;\n"
      "  (((DLTensor*)stack_array)[2].data) = output_buffer_var;\n"
      "  (((TVMValue*)stack_value)[0].v_handle) = (((DLTensor*)stack_array) + 0);\n"
      "  (((TVMValue*)stack_value)[1].v_handle) = (((DLTensor*)stack_array) + 1);\n"
      "  (((TVMValue*)stack_value)[2].v_handle) = (((DLTensor*)stack_array) + 2);\n"
      "  TVMValue ret_val_2;\n  int ret_type_code_2;\n"
      "  if (tvmgen_default_fused_add( (TVMValue*) stack_value , (int*) stack_tcode, 4, "
      "&ret_val_2, &ret_type_code_2, NULL) != 0){\n    return -1;\n  }\n"
      "  return 0;\n}\n"
      "TVM_DLL int32_t tvmgen_default_fused_add(void* args, int32_t* arg_type_ids, int32_t "
      "num_args, void* out_ret_value, int32_t* out_ret_tcode, void* resource_handle) {\n"
      "  void* p0 = (((TVMValue*)args)[0].v_handle);\n"
      "  void* p1 = (((TVMValue*)args)[1].v_handle);\n"
      "  void* T_add = (((TVMValue*)args)[2].v_handle);\n"
      "  int32_t dev_id = (((DLTensor*)p0)[0].device.device_id);\n"
      "  void* p0_1 = (((DLTensor*)p0)[0].data);\n"
      "  void* p1_1 = (((DLTensor*)p1)[0].data);\n"
      "  void* T_add_1 = (((DLTensor*)T_add)[0].data);\n"
      "  for (int32_t ax0 = 0; ax0 < 8; ++ax0) {\n"
      "    ((float*)T_add_1)[ax0] = (((float*)p0_1)[ax0] + ((float*)p1_1)[ax0]);\n  }\n"
      "  return 0;\n}\n";
  // Clean: apart. Then TVM forgets that sid_1 lives across the second call.
  json plan = plan_of({buffer("sid_1", 32, 0, {"sid_2"}), buffer("sid_2", 32, 32, {"sid_1"})}, 64);
  auto v = judge_pool_plan(plan, files(main, 64), metadata(64), usmp_options());
  EXPECT_EQ(v, std::nullopt) << oracle::summary(*v);
  std::string packed_together = main;
  packed_together.replace(packed_together.find("[32]"), 4, "[0]");
  plan = plan_of({buffer("sid_1", 32, 0, {}), buffer("sid_2", 32, 0, {})}, 32);
  v = judge_pool_plan(plan, files(packed_together, 32), metadata(32), usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(std::get<PoolOverlap>(v->detail).live_at_call, 2);
  EXPECT_FALSE(std::get<PoolOverlap>(v->detail).tvm_conflict);
}

// Two host kernels with a temporary of the same name each (`pool_sum`), bound inside them.
std::string temporaries_lib(int sid_1, int first_temp, int second_temp) {
  auto kernel = [](const std::string& name, int offset) {
    return "TVM_DLL int32_t tvmgen_default_" + name +
           "(float* p0, float* T_out, uint8_t* global_workspace_3_var) {\n"
           "  for (int32_t i = 0; i < 8; ++i) {\n    T_out[i] = p0[i];\n  }\n"
           "  void* pool_sum_let = (&(global_workspace_3_var[" +
           std::to_string(offset) +
           "]));\n"
           "  ((float*)pool_sum_let)[0] = 0.000000e+00f;\n  return 0;\n}\n";
  };
  return kernel("fused_sum", first_temp) + kernel("fused_sum_1", second_temp) +
         "TVM_DLL int32_t tvmgen_default___tvm_main__(float* x_buffer_var,float* "
         "output_buffer_var,uint8_t* global_workspace_0_var) {\n"
         "  void* sid_1_let = (&(global_workspace_0_var[" +
         std::to_string(sid_1) +
         "]));\n"
         "  if (tvmgen_default_ccompiler_main_0(x_buffer_var, sid_1_let) != 0 ) return -1;\n"
         "  if (tvmgen_default_fused_sum(x_buffer_var, output_buffer_var, "
         "global_workspace_0_var) != 0 ) return -1;\n"
         "  if (tvmgen_default_fused_sum_1(sid_1_let, output_buffer_var, "
         "global_workspace_0_var) != 0 ) return -1;\n"
         "  return 0;\n}\n";
}

TEST(PoolPlan, FindsACalleesTemporaryOverABufferLiveAcrossItsCall) {
  // sid_1 lives from the first call to the third; the second call's temporary sits on it.
  json plan = plan_of({buffer("sid_1", 32, 0, {}), buffer("pool_sum", 32, 0, {})}, 64);
  auto v = judge_pool_plan(plan, files(temporaries_lib(0, 0, 0), 64), metadata(64), usmp_options());
  ASSERT_TRUE(v.has_value());
  const auto& d = std::get<PoolOverlap>(v->detail);
  EXPECT_EQ(d.second, "pool_sum");
  EXPECT_EQ(d.live_at_call, 2);
  // Two temporaries of one name (the plan counts them: pool_sum, pool_sum2): which is which is
  // not in the C, so neither is judged by liveness.
  plan = plan_of(
      {buffer("sid_1", 32, 0, {}), buffer("pool_sum", 32, 0, {}), buffer("pool_sum2", 32, 0, {})},
      64);
  v = judge_pool_plan(plan, files(temporaries_lib(0, 0, 0), 64), metadata(64), usmp_options());
  EXPECT_EQ(v, std::nullopt) << oracle::summary(*v);
}

TEST(PoolPlan, CountsNoUseOfATupleFieldAHostKernelTakesButNeverReads) {
  // Found by a campaign on v0.18.0: fused_add_1 takes the tuple (sid_1, sid_2) and reads only its
  // first field. TVM's liveness follows the accesses, so sid_2 ends at the second call and
  // sid_3 may take its bytes at the third; no overlap a run could see.
  const std::string lib1 =
      "TVM_DLL int32_t tvmgen_default_fused_add_1(float* p0, float* p0_1, float* p1, float* "
      "T_add, uint8_t* global_workspace_2_var) {\n"
      "  for (int32_t ax0 = 0; ax0 < 8; ++ax0) {\n"
      "    T_add[ax0] = (p0[ax0] + p1[ax0]);\n  }\n  return 0;\n}\n"
      "TVM_DLL int32_t tvmgen_default___tvm_main__(float* x_buffer_var,float* "
      "output_buffer_var,uint8_t* global_workspace_0_var) {\n"
      "  void* sid_1_let = (&(global_workspace_0_var[0]));\n"
      "  void* sid_2_let = (&(global_workspace_0_var[32]));\n"
      "  void* sid_3_let = (&(global_workspace_0_var[32]));\n"
      "  if (tvmgen_default_ccompiler_main_0(x_buffer_var, sid_1_let, sid_2_let) != 0 ) return "
      "-1;\n"
      "  if (tvmgen_default_fused_add(sid_1_let, sid_2_let, output_buffer_var, "
      "global_workspace_0_var) != 0 ) return -1;\n"
      "  if (tvmgen_default_ccompiler_main_1(x_buffer_var, sid_3_let) != 0 ) return -1;\n"
      "  if (tvmgen_default_fused_add_1(sid_1_let, sid_2_let, sid_3_let, output_buffer_var, "
      "global_workspace_0_var) != 0 ) return -1;\n"
      "  return 0;\n}\n" +
      fused_add();
  json plan = plan_of({buffer("sid_1", 32, 0, {"sid_2", "sid_3"}),
                       buffer("sid_2", 32, 32, {"sid_1"}), buffer("sid_3", 32, 32, {"sid_1"})},
                      64);
  auto v = judge_pool_plan(plan, files(lib1, 64), metadata(64), usmp_options());
  EXPECT_EQ(v, std::nullopt) << oracle::summary(*v);
  // Read, the field is live at the fourth call, and sid_3 written at the third overwrote it.
  std::string reads = lib1;
  reads.replace(reads.find("(p0[ax0] + p1[ax0])"), 19, "(p0[ax0] + p0_1[ax0] + p1[ax0])");
  v = judge_pool_plan(plan, files(reads, 64), metadata(64), usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(std::get<PoolOverlap>(v->detail).live_at_call, 3);
}

TEST(PoolPlan, CountsAWorkspaceIoInputLiveFromBeforeTheFirstCall) {
  // Under workspace-io the application writes x into the pool before the run: an intermediate
  // of the first call may not overwrite it while x is still read later.
  const std::string lib1 =
      "TVM_DLL int32_t tvmgen_default___tvm_main__(uint8_t* global_workspace_0_var) {\n"
      "  void* x_buffer_var_let = (&(global_workspace_0_var[0]));\n"
      "  void* output_buffer_var_let = (&(global_workspace_0_var[64]));\n"
      "  void* sid_1_let = (&(global_workspace_0_var[0]));\n"
      "  if (tvmgen_default_ccompiler_main_0(sid_1_let) != 0 ) return -1;\n"
      "  if (tvmgen_default_fused_add(x_buffer_var_let, sid_1_let, output_buffer_var_let, "
      "global_workspace_0_var) != 0 ) return -1;\n"
      "  return 0;\n}\n" +
      fused_add();
  const std::string map =
      "struct tvmgen_default_inputs tvmgen_default_map_inputs(\n"
      "  struct tvmgen_default_workspace_pools* workspace_pools\n){\n"
      "struct tvmgen_default_inputs ret = {\n"
      "\t.x = &((uint8_t*)workspace_pools->global_workspace)[0],\n};\nreturn ret;\n}\n\n"
      "struct tvmgen_default_outputs tvmgen_default_map_outputs(\n"
      "  struct tvmgen_default_workspace_pools* workspace_pools\n){\n"
      "struct tvmgen_default_outputs ret = {\n"
      "\t.output = &((uint8_t*)workspace_pools->global_workspace)[64],\n};\nreturn ret;\n}\n";
  const json plan = plan_of({buffer("x", 32, 0, {"output"}), buffer("output", 32, 64, {"x"}),
                             buffer("sid_1", 32, 0, {"output"})},
                            96);
  Files f = files(lib1, 96);
  f[0].second += map;
  const auto v = judge_pool_plan(plan, f, metadata(96), usmp_options());
  ASSERT_TRUE(v.has_value());
  const auto& d = std::get<PoolOverlap>(v->detail);
  EXPECT_EQ(d.first, "x");
  EXPECT_EQ(d.second, "sid_1");
  EXPECT_FALSE(d.tvm_conflict);
  EXPECT_EQ(d.live_at_call, 1);
}

TEST(PoolPlan, FindsAnOffsetThatIsNoMultipleOfTheAlignmentAsked) {
  // The buffer's own alignment, then the executor's workspace-byte-alignment asked for.
  auto v = judge_pool_plan(seed_plan(0, 36, 68), files(seed_main(0, 36), 68), metadata(68),
                           usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-misaligned:codegen:global_workspace");
  EXPECT_EQ(std::get<PoolMisaligned>(v->detail),
            (PoolMisaligned{"global_workspace", "sid_2", 36, 8}));

  oracle::CaseOptions sixteen = usmp_options();
  sixteen.memory.workspace_alignment = 16;
  v = judge_pool_plan(seed_plan(0, 40, 72), files(seed_main(0, 40), 72), metadata(72), sixteen);
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(std::get<PoolMisaligned>(v->detail).alignment, 16);
}

TEST(PoolPlan, FindsAPoolSmallerThanTheEndOfItsBuffers) {
  // The plan's own size, then TVM's array in the C.
  auto v = judge_pool_plan(seed_plan(0, 32, 48), files(seed_main(0, 32), 48), metadata(48),
                           usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-too-small:codegen:global_workspace");
  EXPECT_EQ(std::get<PoolTooSmall>(v->detail),
            (PoolTooSmall{"global_workspace", 48, "plan", 64, "sid_2"}));
  v = judge_pool_plan(seed_plan(0, 32, 64), files(seed_main(0, 32), 40), metadata(64),
                      usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(std::get<PoolTooSmall>(v->detail).source, "c");
}

TEST(PoolPlan, FindsPoolSizesThatTheHeaderTheMetadataAndThePlanStateDifferently) {
  // The C array larger than the plan's pool.
  auto v = judge_pool_plan(seed_plan(0, 32, 64), files(seed_main(0, 32), 96), metadata(64),
                           usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-size-disagreement:codegen:global_workspace");
  EXPECT_EQ(std::get<PoolSizeDisagreement>(v->detail).sizes,
            (std::map<std::string, std::int64_t>{{"c", 96}, {"plan", 64}}));

  // An external pool: the header's macro against the plan.
  const json external = plan_of({buffer("sid_1", 32, 0, {"sid_2"}, "aotfuzz_workspace"),
                                 buffer("sid_2", 32, 32, {"sid_1"}, "aotfuzz_workspace")},
                                64, "aotfuzz_workspace", /*internal=*/false);
  std::string main = seed_main(0, 32);
  for (std::size_t at; (at = main.find("global_workspace_0_var")) != std::string::npos;) {
    main.replace(at, 22, "aotfuzz_workspace_0_var");
  }
  Files f = {{"default_lib1.c", main},
             {"tvmgen_default.h",
              "#ifndef TVMGEN_DEFAULT_H_\n#define TVMGEN_DEFAULT_H_\n"
              "#define TVMGEN_DEFAULT_WORKSPACE_SIZE 64\n"
              "#define TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_WORKSPACE_POOL_SIZE 80\n#endif\n"}};
  v = judge_pool_plan(external, f, metadata(64), usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-size-disagreement:codegen:aotfuzz_workspace");
  EXPECT_EQ(std::get<PoolSizeDisagreement>(v->detail).sizes.at("header"), 80);

  // metadata.json's main workspace against the pools' sizes.
  v = judge_pool_plan(seed_plan(0, 32, 64), files(seed_main(0, 32), 64), metadata(128),
                      usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "pool-size-disagreement:codegen:global_workspace");
  EXPECT_EQ(std::get<PoolSizeDisagreement>(v->detail).sizes,
            (std::map<std::string, std::int64_t>{{"metadata", 128}, {"plan", 64}}));
}

TEST(PoolPlan, FindsATvmBackendAllocWorkspaceLeftInTvmsCButNotTheRuntimesDefinition) {
  std::string main = seed_main(0, 32);
  main.replace(main.find("  for (int32_t ax0"), 0,
               "  void* T_tmp = TVMBackendAllocWorkspace(1, dev_id, (uint64_t)32, 2, 32);\n"
               "  if (T_tmp == NULL) {\n    return -1;\n  }\n");
  const auto v =
      judge_pool_plan(seed_plan(0, 32, 64), files(main, 64), metadata(64), usmp_options());
  ASSERT_TRUE(v.has_value());
  EXPECT_EQ(oracle::signature(*v), "workspace-leftover:codegen:kernel");
  EXPECT_EQ(std::get<WorkspaceLeftover>(v->detail).function, "tvmgen_default_fused_add");
  // Without a plan the other checks have nothing to read; this one still holds.
  EXPECT_TRUE(judge_pool_plan(json(), files(main, 64), "", usmp_options()).has_value());
}

TEST(PoolPlan, JudgesNothingItCannotReadInTvmsForms) {
  const auto o = usmp_options();
  // No plan (a TVM without a custom planner), a plan of another shape, C of another shape.
  EXPECT_EQ(judge_pool_plan(json(), files(seed_main(0, 0), 64), metadata(64), o), std::nullopt);
  json odd = seed_plan(0, 0, 64);
  odd["buffers"][0].erase("offset");
  EXPECT_EQ(judge_pool_plan(odd, files(seed_main(0, 0), 64), metadata(64), o), std::nullopt);
  EXPECT_EQ(judge_pool_plan(json::array(), {}, "", o), std::nullopt);
  // Buffers TVM does not list as conflicting, in C this reader does not know: no liveness, so
  // no overlap, and a metadata.json that is no JSON says nothing either.
  const json apart = plan_of({buffer("sid_1", 32, 0, {}), buffer("sid_2", 32, 0, {})}, 32);
  EXPECT_EQ(judge_pool_plan(apart, {{"default_lib1.c", "garbage { ( ;"}}, "{not json", o),
            std::nullopt);
  std::string unread = chain_main(0, 0);
  for (std::size_t at; (at = unread.find("(&(")) != std::string::npos;) unread.replace(at, 3, "(");
  EXPECT_EQ(judge_pool_plan(apart, files(unread, 32), metadata(32), o), std::nullopt);
}

TEST(PoolPlan, NamesPoolsWithoutTheCountersOfTheirCVariables) {
  EXPECT_EQ(stable_pool_name("global_workspace_1_var"), "global_workspace");
  EXPECT_EQ(stable_pool_name("global_const_workspace_12_var"), "global_const_workspace");
  EXPECT_EQ(stable_pool_name("global_workspace_0_var_1"), "global_workspace");
  EXPECT_EQ(stable_pool_name("aotfuzz_workspace"), "aotfuzz_workspace");
}

}  // namespace
}  // namespace aotfuzz::tvm

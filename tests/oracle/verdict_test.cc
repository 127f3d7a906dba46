// Tests of verdicts: names, JSON round trip, stable signatures free of varying values, exit codes.
#include <gtest/gtest.h>

#include <csignal>

#include "oracle/verdict.h"

namespace aotfuzz::oracle {
namespace {

using json = nlohmann::json;

// One verdict of every kind, with details full of names, indices, values and addresses.
std::vector<Verdict> examples() {
  Crash crash;
  crash.signal = SIGSEGV;
  crash.callee_kind = CalleeKind::kExternal;
  crash.callee = "tvmgen_default_ccompiler_main_4";
  crash.stderr_tail = "fault at 0x7ffd1234\n";
  return {
      Verdict{Stage::kRun, Pass{}},
      Verdict{Stage::kCodegen, Mismatch{1, 37, "0x1.8p+0", "0x0p+0"}},
      Verdict{Stage::kCodegen, Arity{"tvmgen_default_fused_add_add_1", CalleeKind::kKernel, 3, 2,
                                     ArityEvidence::kDynamic}},
      Verdict{Stage::kRun, InputClobbered{2, 99, "1", "-7"}},
      Verdict{Stage::kPartition, OutputUnwritten{0, 12345}},
      Verdict{Stage::kRun, crash},
      Verdict{Stage::kRun, Timeout{10000, "wall-clock limit of 10000 ms"}},
      Verdict{Stage::kCodegen, CompileError{"gcc", "case_1234.c:7:3: error: x\n  7 | y\n", ""}},
      Verdict{Stage::kMerge, PipelineError{"region 17 has a cycle via %42"}},
      Verdict{Stage::kAnnotated, InvalidInput{"seed 987654: line 3 column 9: bad token"}},
      Verdict{Stage::kCodegen, ToolchainError{"tcc crashed: signaled SIGSEGV (pid 31337)"}},
      Verdict{Stage::kCodegen,
              SutError{"TVMError: Unsupported dtype int8 (codegen_c.h:352)", "codegen_c"}},
      Verdict{Stage::kPartition, SutCrash{"the TVM driver was killed by SIGSEGV"}},
      Verdict{Stage::kPartition, Fidelity{"--- builtin/partitioned\n+++ tvm/partitioned\n"}},
      Verdict{Stage::kFuse, Structure{"--- pipeline/fused\n+++ tvm-v0.8-rules/fused\n"}},
      Verdict{Stage::kCodegen,
              Nondeterministic{"--- tvmgen_default_lib.c (first)\n+++ tvmgen_default_lib.c "
                               "(second)\n"}},
      Verdict{Stage::kCodegen, ErrorIgnored{3, 0, 2}},
      Verdict{Stage::kCodegen,
              WorkspaceOversized{3, "tvmgen_default_ccompiler_main_2", 2, 32, 0, 32, 2, 96}},
      Verdict{Stage::kCodegen,
              PoolOverlap{"global_workspace", "sid_2", "sid_3", 0, 16, 8, 24, true, 2}},
      Verdict{Stage::kCodegen, PoolMisaligned{"global_workspace", "sid_4", 12, 8}},
      Verdict{Stage::kCodegen, PoolTooSmall{"aotfuzz_workspace", 64, "header", 96, "sid_1"}},
      Verdict{Stage::kCodegen,
              PoolSizeDisagreement{"global_workspace", {{"plan", 96}, {"metadata", 64}}}},
      Verdict{Stage::kCodegen, WorkspaceLeftover{"tvmgen_default_fused_add", CalleeKind::kKernel}},
      Verdict{Stage::kCodegen,
              Known{"cpacked-num-args-one-short", "TVM PR #14015",
                    "arity at codegen: external tvmgen_default_ccompiler_main_0 called with 2 "
                    "arguments, takes 3 (emitted C)"}},
  };
}

TEST(Verdict, ExamplesCoverEveryKindInOrder) {
  auto all = examples();
  ASSERT_EQ(static_cast<int>(all.size()), kNumVerdictKinds);
  for (int i = 0; i < kNumVerdictKinds; ++i) EXPECT_EQ(static_cast<int>(all[i].kind()), i);
}

TEST(Verdict, NamesRoundTrip) {
  for (int i = 0; i < kNumVerdictKinds; ++i) {
    auto kind = static_cast<VerdictKind>(i);
    EXPECT_EQ(parse_verdict_kind(verdict_kind_name(kind)), kind);
  }
  for (int i = 0; i < kNumStages; ++i) {
    auto stage = static_cast<Stage>(i);
    EXPECT_EQ(parse_stage(stage_name(stage)), stage);
  }
  EXPECT_EQ(parse_verdict_kind("bogus"), std::nullopt);
  EXPECT_EQ(parse_stage("link"), std::nullopt);
  EXPECT_EQ(verdict_kind_name(VerdictKind::kInputClobbered), "input-clobbered");
  EXPECT_EQ(stage_name(Stage::kPartition), "partition");
  EXPECT_EQ(callee_kind_name(CalleeKind::kExecutor), "executor");
}

TEST(Verdict, JsonRoundTripsEveryKindThroughText) {
  for (const Verdict& v : examples()) {
    json j = to_json(v);
    EXPECT_EQ(j.at("kind"), verdict_kind_name(v.kind()));
    EXPECT_EQ(j.at("signature"), signature(v));
    Verdict back = from_json(json::parse(j.dump()));
    EXPECT_EQ(back, v) << j.dump();
    EXPECT_EQ(to_json(back), j);
  }
}

TEST(Verdict, CrashWithoutAKnownCalleeRoundTrips) {
  Verdict v{Stage::kRun, Crash{SIGBUS, std::nullopt, "", ""}};
  EXPECT_EQ(from_json(to_json(v)), v);
  EXPECT_EQ(signature(v), "crash:run:SIGBUS");
}

TEST(Verdict, SignaturesNameKindStageAndCalleeKind) {
  auto all = examples();
  EXPECT_EQ(signature(all[0]), "pass:run");
  EXPECT_EQ(signature(all[1]), "mismatch:codegen");
  EXPECT_EQ(signature(all[2]), "arity:codegen:kernel");
  EXPECT_EQ(signature(all[5]), "crash:run:external:SIGSEGV");
  EXPECT_EQ(signature(all[7]), "compile-error:codegen");
  EXPECT_EQ(signature(all[11]), "sut-error:codegen:codegen_c");
  EXPECT_EQ(signature(all[12]), "sut-crash:partition");
  EXPECT_EQ(signature(all[13]), "fidelity:partition");
  EXPECT_EQ(signature(all[14]), "structure:fuse");
}

TEST(Verdict, PoolVerdictsAreSignedByThePoolAndTheLeftoverByItsFunctionsKind) {
  auto all = examples();
  EXPECT_EQ(signature(all[18]), "pool-overlap:codegen:global_workspace");
  EXPECT_EQ(signature(all[19]), "pool-misaligned:codegen:global_workspace");
  EXPECT_EQ(signature(all[20]), "pool-too-small:codegen:aotfuzz_workspace");
  EXPECT_EQ(signature(all[21]), "pool-size-disagreement:codegen:global_workspace");
  EXPECT_EQ(signature(all[22]), "workspace-leftover:codegen:kernel");
  // Offsets, sizes, buffers and whether TVM saw the conflict stay out of the key.
  Verdict other{Stage::kCodegen,
                PoolOverlap{"global_workspace", "sid_7", "sid_9", 32, 48, 40, 72, false, 5}};
  EXPECT_EQ(signature(other), signature(all[18]));
  Verdict odd{Stage::kCodegen, PoolMisaligned{"my pool:1", "b", 3, 4}};
  EXPECT_EQ(signature(odd), "pool-misaligned:codegen:my_pool_1");
  for (int i = 18; i <= 22; ++i) EXPECT_EQ(exit_code(all[i]), 1) << summary(all[i]);
}

TEST(Verdict, ARegionLoweredByATargetHookIsItsOwnCalleeKindApartFromCSourceRegions) {
  EXPECT_EQ(callee_kind_of("tvmgen_my_mod_aotfuzz_uma_main_0", "my_mod"), CalleeKind::kHookLowered);
  EXPECT_EQ(callee_kind_of("tvmgen_my_mod_ccompiler_main_0", "my_mod"), CalleeKind::kExternal);
  EXPECT_EQ(callee_kind_of("tvmgen_my_mod_fused_add", "my_mod"), CalleeKind::kKernel);
  EXPECT_EQ(callee_kind_of("tvmgen_my_mod_run_model", "my_mod"), CalleeKind::kExecutor);
  // The target follows the module's prefix, not any name that merely contains it.
  EXPECT_EQ(callee_kind_of("tvmgen_aotfuzz_uma_ccompiler_main_0", "aotfuzz_uma"),
            CalleeKind::kExternal);
  const Verdict uma{Stage::kCodegen, Arity{"tvmgen_my_mod_aotfuzz_uma_main_0",
                                           CalleeKind::kHookLowered, 3, 2, ArityEvidence::kStatic}};
  const Verdict ccompiler{
      Stage::kCodegen,
      Arity{"tvmgen_my_mod_ccompiler_main_0", CalleeKind::kExternal, 3, 2, ArityEvidence::kStatic}};
  EXPECT_EQ(signature(uma), "arity:codegen:hook-lowered");
  EXPECT_NE(signature(uma), signature(ccompiler));
  EXPECT_EQ(from_json(json::parse(to_json(uma).dump())), uma);
}

TEST(Verdict, TvmCompileErrorsOfDifferentCausesGetDifferentSignaturesAndTheSameCauseOne) {
  // gcc on TVM's C: the identity-output region's parameter list, and the rank-1 region's kernel
  // macro, which the ccompiler codegen only defines for rank 2 (docs/tvm.md).
  const std::string identity =
      "lib1.c:12:19: error: expected declaration specifiers or \u2018...\u2019 before "
      "\u2018*\u2019 token\n   12 | void f(float* in, * out0) {";
  const std::string identity_elsewhere =
      "lib0.c:40:33: error: expected declaration specifiers or \u2018...\u2019 before "
      "\u2018*\u2019 token\n";
  const std::string rank1 =
      "lib1.c: In function \u2018tvmgen_default_ccompiler_main_0_\u2019:\n"
      "lib1.c:7:3: warning: implicit declaration of function \u2018CSOURCE_BINARY_OP_1D\u2019\n"
      "/usr/bin/ld: lib1.o: in function `tvmgen_default_ccompiler_main_0_':\n"
      "lib1.c:(.text+0x4c): undefined reference to `CSOURCE_BINARY_OP_1D'\n"
      "collect2: error: ld returned 1 exit status\n";
  EXPECT_EQ(diagnostic_class(identity), "expected-declaration-specifiers-or-before-token");
  EXPECT_EQ(diagnostic_class(identity_elsewhere), diagnostic_class(identity));
  EXPECT_EQ(diagnostic_class(rank1), "undefined-reference-to");
  EXPECT_EQ(diagnostic_class("something odd"), "unclassified");
  Verdict a{Stage::kCodegen, CompileError{"gcc", identity, diagnostic_class(identity)}};
  Verdict b{Stage::kCodegen, CompileError{"gcc", rank1, diagnostic_class(rank1)}};
  EXPECT_NE(signature(a), signature(b));
  EXPECT_EQ(signature(a), "compile-error:codegen:expected-declaration-specifiers-or-before-token");
  EXPECT_EQ(from_json(to_json(a)), a);
  // Without a class (the builtin pipeline's C) the signature is the kind and stage alone.
  EXPECT_EQ(signature(Verdict{Stage::kCodegen, CompileError{"tcc", identity, ""}}),
            "compile-error:codegen");
}

TEST(Verdict, ALongCompilerLogKeepsItsFirstErrorSoOneBugKeepsOneSignature) {
  // gcc reports the same bug of TVM's C in every region it generated: however many there are,
  // the signature is drawn from the first error, not from wherever a cut left off.
  host::CompileResult result;
  result.status = host::CompileStatus::kCompileError;
  result.diagnostics = "lib1.c:3:40: error: expected declaration specifiers before '*' token\n";
  for (int i = 0; i < 400; ++i) {
    result.diagnostics +=
        "lib1.c:" + std::to_string(10 + i) + ":5: error: expected expression before ')' token\n";
  }
  const auto v = verdict_from_compile(result, host::CompilerKind::kGcc);
  ASSERT_TRUE(v);
  const auto& c = std::get<CompileError>(v->detail);
  EXPECT_LE(c.diagnostics.size(), 8192u + 16u);
  EXPECT_EQ(diagnostic_class(c.diagnostics), "expected-declaration-specifiers-before-token");
  // The end of the log is kept too.
  EXPECT_NE(c.diagnostics.find("lib1.c:409:5"), std::string::npos);
}

TEST(Verdict, ATvmErrorsSignatureNamesTheFailedCheckWithoutItsNumbers) {
  const std::string nested =
      "TVMError: Traceback...\n  File \"src/relay/backend/aot_executor_codegen.cc\", line 193\n"
      "TVMError: Check failed: (ttype) is false: \n";
  EXPECT_EQ(tvm_error_site("aot_executor_codegen", nested), "aot_executor_codegen:ttype");
  EXPECT_EQ(tvm_error_site("graph_plan_memory",
                           "Check failed: sids.size() == 2 (3 vs. 2) : wrong storage"),
            "graph_plan_memory:sids-size");
  EXPECT_EQ(tvm_error_site("codegen_c", "Unsupported dtype int8"), "codegen_c");
  Verdict v{Stage::kCodegen, SutError{nested, tvm_error_site("aot_executor_codegen", nested)}};
  EXPECT_EQ(signature(v), "sut-error:codegen:aot_executor_codegen:ttype");
}

TEST(Verdict, SignaturesContainNoDigitsFromSeedsIndicesOrAddresses) {
  for (const Verdict& v : examples()) {
    std::string sig = signature(v);
    EXPECT_EQ(sig.find_first_of("0123456789"), std::string::npos) << sig;
  }
  Verdict odd{Stage::kRun, Crash{SIGRTMIN + 3, std::nullopt, "", ""}};
  EXPECT_EQ(signature(odd), "crash:run:SIGOTHER");
  Verdict abnormal{Stage::kRun, Crash{0, std::nullopt, "", "exited 1"}};
  EXPECT_EQ(signature(abnormal), "crash:run:NOSIGNAL");
  EXPECT_NE(summary(abnormal).find("abnormal exit"), std::string::npos) << summary(abnormal);
}

TEST(Verdict, SignaturesIgnoreEverythingButKindStageAndCalleeKind) {
  Verdict a{Stage::kCodegen,
            Arity{"tvmgen_default_fused_add", CalleeKind::kKernel, 3, 2, ArityEvidence::kStatic}};
  Verdict b{Stage::kCodegen, Arity{"tvmgen_mod7_fused_add_add_2", CalleeKind::kKernel, 5, 4,
                                   ArityEvidence::kDynamic}};
  EXPECT_EQ(signature(a), signature(b));
  Verdict c = a;
  std::get<Arity>(c.detail).callee_kind = CalleeKind::kExternal;
  EXPECT_NE(signature(a), signature(c));
  Verdict d = a;
  d.stage = Stage::kFuse;
  EXPECT_NE(signature(a), signature(d));
  Verdict m1{Stage::kRun, Mismatch{0, 1, "1", "2"}};
  Verdict m2{Stage::kRun, Mismatch{3, 400, "nan", "0"}};
  EXPECT_EQ(signature(m1), signature(m2));
}

TEST(Verdict, FindingsAndExitCodesFollowTheCommandLineContract) {
  for (const Verdict& v : examples()) {
    switch (v.kind()) {
      case VerdictKind::kPass:
      case VerdictKind::kKnown:
        EXPECT_FALSE(is_finding(v));
        EXPECT_EQ(exit_code(v), 0);
        break;
      case VerdictKind::kInvalidInput:
        EXPECT_FALSE(is_finding(v));
        EXPECT_EQ(exit_code(v), 2);
        break;
      case VerdictKind::kToolchainError:
        EXPECT_FALSE(is_finding(v));
        EXPECT_EQ(exit_code(v), 3);
        break;
      default:
        EXPECT_TRUE(is_finding(v)) << signature(v);
        EXPECT_EQ(exit_code(v), 1) << signature(v);
    }
  }
}

TEST(Verdict, SummariesAreSingleLinesThatSayWhatHappened) {
  for (const Verdict& v : examples()) {
    std::string s = summary(v);
    EXPECT_EQ(s.find('\n'), std::string::npos) << s;
    EXPECT_FALSE(s.empty());
    EXPECT_EQ(s.rfind(std::string(verdict_kind_name(v.kind())), 0), 0u) << s;
  }
  auto all = examples();
  EXPECT_EQ(summary(all[2]),
            "arity at codegen: kernel tvmgen_default_fused_add_add_1 called with 2 arguments, "
            "takes 3 (call trace)");
  EXPECT_NE(summary(all[5]).find("SIGSEGV"), std::string::npos);
}

TEST(Verdict, MalformedJsonIsAVerdictErrorNamingTheField) {
  EXPECT_THROW(from_json(json::array()), VerdictError);
  EXPECT_THROW(from_json(json{{"kind", "bogus"}, {"stage", "run"}}), VerdictError);
  json j = to_json(examples()[2]);
  j.erase("expected_args");
  try {
    from_json(j);
    FAIL() << "a missing field must be rejected";
  } catch (const VerdictError& e) {
    EXPECT_NE(std::string(e.what()).find("expected_args"), std::string::npos) << e.what();
  }
  json k = to_json(examples()[1]);
  k["output_index"] = "one";
  EXPECT_THROW(from_json(k), VerdictError);
  json s = to_json(examples()[1]);
  s["stage"] = "link";
  EXPECT_THROW(from_json(s), VerdictError);
  // ir::Error is the base of every bad-input error.
  EXPECT_THROW(from_json(json::object()), ir::Error);
}

}  // namespace
}  // namespace aotfuzz::oracle

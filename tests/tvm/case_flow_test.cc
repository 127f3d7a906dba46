// The TVM case flow's pure parts (tuple-parameter flattening, the driver's graph form, diffs)
// and its failure paths against a fake TVM package (tests/tvm/fake_tvm), which
// any machine with python3 can run: TVM errors, crashes and hangs become sut-error, sut-crash and
// timeout verdicts; a TVM that does not import is a toolchain error.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "fuzz/campaign.h"
#include "fuzz/campaign_cases.h"
#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "oracle/case_flow.h"
#include "oracle/module_diff.h"
#include "oracle/oracle.h"
#include "tests/support/files.h"
#include "tests/support/modules.h"
#include "tvm/case_flow.h"
#include "tvm/driver.h"
#include "tvm/system.h"

namespace aotfuzz::tvm {
namespace {

using oracle::CaseOptions;
using oracle::CaseResult;
using oracle::Fidelity;
using oracle::is_finding;
using oracle::print_by_name;
using oracle::print_by_name_and_key;
using oracle::run_case;
using oracle::signature;
using oracle::summary;
using oracle::SutCrash;
using oracle::SutError;
using oracle::ToolchainError;
using oracle::unified_diff;
using oracle::VerdictKind;

const char* kTupleParamGraph =
    R"(def @main(%p: (Tensor[(2), float32], Tensor[(2), float32]), %x: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%p, compiler="ccompiler");
  %1 = %0.1;
  %2 = annotation.compiler_begin(%x, compiler="ccompiler");
  %3 = add(%1, %2);
  annotation.compiler_end(%3, compiler="ccompiler")
})";

TEST(FlattenTupleParams, ReplacesATupleParameterByOneTensorParameterPerField) {
  const ir::Module m = test_support::parse_verified(kTupleParamGraph);
  const ir::Module flat = flatten_tuple_params(m);
  ir::verify(flat);
  const auto& params = flat.main()->params();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0]->name(), "p_0");
  EXPECT_EQ(params[1]->name(), "p_1");
  EXPECT_EQ(params[2]->name(), "x");
  for (const auto& p : params) EXPECT_TRUE(p->type()->is_tensor());
  EXPECT_TRUE(ir::type_equal(flat.main()->ret_type(), m.main()->ret_type()));
}

TEST(FlattenTupleParams, LeavesAGraphOfTensorParametersAsItIs) {
  const ir::Module m = test_support::seed_9036();
  EXPECT_EQ(ir::print_module(flatten_tuple_params(m)), ir::print_module(m));
}

TEST(TvmGraphJson, ListsParametersFirstThenEveryNodeOnceInPostOrder) {
  const ir::Module m = test_support::seed_9036();
  const auto j = tvm_graph_json(m.main());
  const auto& params = j.at("params");
  ASSERT_EQ(params.size(), m.main()->params().size());
  EXPECT_EQ(params[0].at("name"), m.main()->params()[0]->name());
  EXPECT_EQ(params[0].at("dtype"), "float32");
  const auto& nodes = j.at("nodes");
  for (std::size_t i = 0; i < params.size(); ++i) {
    EXPECT_EQ(nodes[i].at("kind"), "param");
    EXPECT_EQ(nodes[i].at("index"), i);
  }
  int begins = 0;
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (n.at("kind") == "call") {
      for (const auto& a : n.at("args")) EXPECT_LT(a.get<std::size_t>(), i) << "node " << i;
      if (n.at("op") == "annotation.compiler_begin") {
        ++begins;
        EXPECT_EQ(n.at("compiler"), "ccompiler");
      }
    }
  }
  EXPECT_GT(begins, 0);
  EXPECT_EQ(j.at("result").get<std::size_t>(), nodes.size() - 1);
}

TEST(TvmGraphJson, RefusesTupleParameters) {
  EXPECT_THROW(tvm_graph_json(test_support::parse_verified(kTupleParamGraph).main()), ir::Error);
}

TEST(UnifiedDiff, IsEmptyForEqualTextsAndShowsRemovedAndAddedLinesOtherwise) {
  EXPECT_EQ(unified_diff("a\nb\n", "a\nb\n", "x", "y"), "");
  const std::string d = unified_diff("a\nb\nc\n", "a\nB\nc\n", "ours", "theirs");
  EXPECT_NE(d.find("--- ours"), std::string::npos) << d;
  EXPECT_NE(d.find("+++ theirs"), std::string::npos) << d;
  EXPECT_NE(d.find("\n-b"), std::string::npos) << d;
  EXPECT_NE(d.find("\n+B"), std::string::npos) << d;
}

TEST(ModuleDiff, TheComparisonWithTvmIgnoresTheOrderOfAFunctionsAttributes) {
  // TVM keeps attributes in a Map: v0.8 prints Inline first, v0.18 Compiler first.
  const char* v08 = R"(def @main(%x: Tensor[(2), float32]) { @f(%x) }
def @f(%a: Tensor[(2), float32], Inline=1, Compiler="ccompiler", global_symbol="f", Primitive=1) -> Tensor[(2), float32] { add(%a, %a) })";
  const char* v18 = R"(def @main(%x: Tensor[(2), float32]) { @f(%x) }
def @f(%a: Tensor[(2), float32], Compiler="ccompiler", Primitive=1, Inline=1, global_symbol="f") -> Tensor[(2), float32] { add(%a, %a) })";
  const ir::Module a = test_support::parse_verified(v08);
  const ir::Module b = test_support::parse_verified(v18);
  EXPECT_NE(print_by_name(a), print_by_name(b));
  EXPECT_EQ(print_by_name_and_key(a), print_by_name_and_key(b));
}

// --- the driver and the case flow against the fake TVM ---

CaseOptions tvm_options(const std::string& home, const std::string& mod_name) {
  CaseOptions o;
  o.sut = make_tvm_system({"tvm", test_support::source_path(home).string(), ""});
  o.aot.mod_name = mod_name;
  o.limits.timeout = std::chrono::milliseconds(5'000);
  return o;
}

TEST(TvmCase, ATvmErrorInItsBuildIsASutErrorAtCodegen) {
  const CaseResult r =
      run_case(test_support::seed_9036(), tvm_options("tests/tvm/fake_tvm", "my_mod"));
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kSutError) << summary(r.verdict);
  // The fake's errors name no TVM source file: the bucket is the exception's class.
  EXPECT_EQ(signature(r.verdict), "sut-error:codegen:TVMError");
  const std::string message = std::get<SutError>(r.verdict.detail).message;
  const std::size_t first = message.find("fake TVM builds nothing");
  EXPECT_NE(first, std::string::npos) << message;
  EXPECT_EQ(message.find("fake TVM builds nothing", first + 1), std::string::npos)
      << "the error once, not twice:\n"
      << message;
  EXPECT_TRUE(is_finding(r.verdict));
}

TEST(TvmCase, TheSystemSaysWhichTvmBuildItIs) {
  const CaseOptions o = tvm_options("tests/tvm/fake_tvm", "my_mod");
  const std::string identity = o.sut->identity();
  EXPECT_EQ(identity.rfind("TVM 0.0.fake, at ", 0), 0u) << identity;
  EXPECT_NE(identity.find(test_support::source_path("tests/tvm/fake_tvm").string()),
            std::string::npos)
      << identity;
  EXPECT_EQ(oracle::builtin_system()->identity(), "");
}

TEST(TvmCase, ATvmErrorInMergeCompilerRegionsIsASutErrorAtMerge) {
  const ir::Module m =
      test_support::parse_verified(R"(def @main(%raise_merge: Tensor[(2), float32]) {
  %0 = annotation.compiler_begin(%raise_merge, compiler="ccompiler");
  %1 = add(%0, %0);
  annotation.compiler_end(%1, compiler="ccompiler")
})");
  const CaseResult r = run_case(m, tvm_options("tests/tvm/fake_tvm", "my_mod"));
  // The fake raises an ICHECK: its condition is part of the signature.
  EXPECT_EQ(signature(r.verdict), "sut-error:merge:TVMError:fake-MergeCompilerRegions-refuses")
      << summary(r.verdict);
}

TEST(TvmCase, ACrashOfTvmIsASutCrashAtTheStepItAnnounced) {
  const CaseResult r =
      run_case(test_support::seed_9036(), tvm_options("tests/tvm/fake_tvm", "crash_build"));
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kSutCrash) << summary(r.verdict);
  EXPECT_EQ(signature(r.verdict), "sut-crash:codegen");
  EXPECT_NE(std::get<SutCrash>(r.verdict.detail).message.find("SIGABRT"), std::string::npos)
      << std::get<SutCrash>(r.verdict.detail).message;
}

TEST(TvmCase, APartitionedModuleUnlikeTheBuiltinOneIsAFidelityVerdictWithADiff) {
  // The fake TVM partitions every graph into `def @main() { () }`.
  CaseOptions o = tvm_options("tests/tvm/fake_tvm", "my_mod");
  o.in_process_only = true;
  const CaseResult r = run_case(test_support::seed_9036(), o);
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kFidelity) << summary(r.verdict);
  EXPECT_EQ(signature(r.verdict), "fidelity:partition");
  const std::string& diff = std::get<Fidelity>(r.verdict.detail).diff;
  EXPECT_NE(diff.find("--- builtin/partitioned"), std::string::npos) << diff;
  EXPECT_NE(diff.find("+def @main()"), std::string::npos) << diff;
  EXPECT_NE(diff.find("-def @tvmgen_my_mod_ccompiler_main_0"), std::string::npos) << diff;
}

TEST(TvmDriver, AHungRequestTimesOutAndTheNextRequestGetsAFreshDriver) {
  TvmDriverOptions o;
  o.home = test_support::source_path("tests/tvm/fake_tvm").string();
  o.request_timeout = std::chrono::milliseconds(3'000);
  TvmDriver driver(o);
  nlohmann::json request = {{"graph", tvm_graph_json(test_support::seed_9036().main())},
                            {"merge", true},
                            {"mod_name", "hang_build"},
                            {"api", "packed"},
                            {"interface", "packed"}};
  const TvmBuild hung = driver.build(request);
  EXPECT_EQ(hung.status, TvmBuild::Status::kTimedOut) << hung.message;
  EXPECT_EQ(hung.stage, "build");
  request["mod_name"] = "my_mod";
  const TvmBuild next = driver.build(request);
  EXPECT_EQ(next.status, TvmBuild::Status::kTvmError) << next.message;
  EXPECT_EQ(driver.starts(), 2);
}

TEST(TvmDriver, ServesManyRequestsFromOneProcess) {
  TvmDriverOptions o;
  o.home = test_support::source_path("tests/tvm/fake_tvm").string();
  TvmDriver driver(o);
  const nlohmann::json request = {{"graph", tvm_graph_json(test_support::seed_9036().main())},
                                  {"merge", false},
                                  {"mod_name", "my_mod"},
                                  {"api", "packed"},
                                  {"interface", "packed"}};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(driver.build(request).status, TvmBuild::Status::kTvmError);
  EXPECT_EQ(driver.starts(), 1);
  EXPECT_EQ(driver.tvm_version(), "0.0.fake");
}

nlohmann::json request_for(const std::string& mod_name) {
  return {{"graph", tvm_graph_json(test_support::seed_9036().main())},
          {"merge", false},
          {"mod_name", mod_name},
          {"api", "packed"},
          {"interface", "packed"}};
}

std::vector<nlohmann::json> requests_for(const std::vector<std::string>& mod_names) {
  std::vector<nlohmann::json> out;
  for (const auto& name : mod_names) out.push_back(request_for(name));
  return out;
}

TvmDriverOptions fake_driver(
    std::chrono::milliseconds request_timeout = std::chrono::seconds(120)) {
  TvmDriverOptions o;
  o.home = test_support::source_path("tests/tvm/fake_tvm").string();
  o.request_timeout = request_timeout;
  return o;
}

// What matters of a build for a verdict.
std::string outcome(const TvmBuild& b) {
  std::string first_line = b.message.substr(0, b.message.find('\n'));
  return std::to_string(static_cast<int>(b.status)) + " " + b.stage + " " + first_line;
}

TEST(TvmDriver, AnswersEachRequestOfABatchInOrderFromOneProcess) {
  TvmDriver driver(fake_driver());
  std::vector<std::size_t> answered;
  const auto builds =
      driver.build_batch(requests_for({"first", "second", "third"}),
                         [&](std::size_t i, const TvmBuild&) { answered.push_back(i); });
  ASSERT_EQ(builds.size(), 3u);
  for (const auto& [i, name] :
       std::vector<std::pair<int, std::string>>{{0, "first"}, {1, "second"}, {2, "third"}}) {
    EXPECT_EQ(builds[i].status, TvmBuild::Status::kTvmError);
    EXPECT_EQ(builds[i].stage, "build");
    EXPECT_NE(builds[i].message.find("(module " + name + ")"), std::string::npos)
        << builds[i].message;
  }
  EXPECT_EQ(answered, (std::vector<std::size_t>{0, 1, 2}));
  EXPECT_EQ(driver.starts(), 1);
  EXPECT_EQ(driver.retries(), 0);
}

TEST(TvmDriver, ACrashInABatchIsThatRequestsAloneAndTheBatchGoesOn) {
  TvmDriver alone(fake_driver());
  const TvmBuild crash_alone = alone.build(request_for("crash_build"));
  ASSERT_EQ(crash_alone.status, TvmBuild::Status::kCrashed);

  TvmDriver driver(fake_driver());
  const auto builds = driver.build_batch(requests_for({"before", "crash_build", "after"}));
  ASSERT_EQ(builds.size(), 3u);
  EXPECT_EQ(outcome(builds[0]), outcome(alone.build(request_for("before"))));
  EXPECT_EQ(outcome(builds[1]), outcome(crash_alone));
  EXPECT_NE(builds[1].message.find("SIGABRT"), std::string::npos) << builds[1].message;
  EXPECT_EQ(outcome(builds[2]), outcome(alone.build(request_for("after"))));
  // The batch, the crashed request again alone, then the rest.
  EXPECT_EQ(driver.retries(), 1);
  EXPECT_EQ(driver.starts(), 3);
}

TEST(TvmDriver, AHangOrAGarbageAnswerInABatchCostsTheBatchARetryNotAVerdict) {
  TvmDriver driver(fake_driver(std::chrono::milliseconds(3'000)));
  const auto builds = driver.build_batch(requests_for({"hang_build", "garbage_build", "after"}));
  ASSERT_EQ(builds.size(), 3u);
  EXPECT_EQ(builds[0].status, TvmBuild::Status::kTimedOut) << builds[0].message;
  EXPECT_EQ(builds[0].stage, "build");
  EXPECT_EQ(builds[1].status, TvmBuild::Status::kCrashed) << builds[1].message;
  EXPECT_EQ(builds[1].stage, "build");
  EXPECT_NE(builds[1].message.find("this is no answer"), std::string::npos) << builds[1].message;
  EXPECT_EQ(builds[2].status, TvmBuild::Status::kTvmError) << builds[2].message;
  EXPECT_NE(builds[2].message.find("(module after)"), std::string::npos) << builds[2].message;
  EXPECT_EQ(driver.retries(), 2);
}

TEST(TvmCase, ACampaignOnTvmGivesEachCaseTheVerdictItGetsAlone) {
  // The fake TVM fails every build alike: what is checked is that TVM's work in batches,
  // overlapping the runs of other cases, loses and mixes up nothing on the way.
  fuzz::CampaignOptions o;
  o.seed = 4;
  o.max_cases = 12;
  o.jobs = 2;
  o.base = tvm_options("tests/tvm/fake_tvm", "my_mod");
  std::map<std::uint64_t, std::string> overlapped, alone;
  for (auto [out, executor] : {std::pair{&overlapped, fuzz::ExecutorChoice::kBatched},
                               std::pair{&alone, fuzz::ExecutorChoice::kSingle}}) {
    o.executor = executor;
    std::mutex mu;
    fuzz::CampaignCallbacks cb;
    cb.on_case = [&, out = out](const fuzz::CaseSpec& spec, const CaseResult& r) {
      std::lock_guard lock(mu);
      (*out)[spec.index] = signature(r.verdict);
    };
    const fuzz::CampaignResult r = fuzz::run_campaign(o, cb);
    EXPECT_EQ(r.overlapped, executor == fuzz::ExecutorChoice::kBatched);
  }
  ASSERT_EQ(overlapped.size(), 12u);
  EXPECT_EQ(overlapped, alone);
}

TEST(TvmCase, ATvmThatDoesNotImportIsAToolchainErrorNotAFinding) {
  const CaseResult r =
      run_case(test_support::seed_9036(), tvm_options("tests/tvm/fake_tvm_broken", "my_mod"));
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kToolchainError) << summary(r.verdict);
  EXPECT_NE(summary(r.verdict).find("cannot load libtvm.so"), std::string::npos)
      << summary(r.verdict);
  EXPECT_FALSE(is_finding(r.verdict));
}

TEST(TvmCase, ATvmWithoutTheLlvmItNeedsIsAToolchainErrorNotAFinding) {
  const CaseResult r =
      run_case(test_support::seed_9036(), tvm_options("tests/tvm/fake_tvm", "no_llvm"));
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kToolchainError) << summary(r.verdict);
  EXPECT_NE(summary(r.verdict).find("no LLVM codegen"), std::string::npos) << summary(r.verdict);
  EXPECT_FALSE(is_finding(r.verdict));
}

TEST(TvmGraphJson, CarriesAConstantWithItsShapeTypeAndElements) {
  const ir::Module m = test_support::parse_verified(R"(def @main(%x: Tensor[(2), int32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = const(Tensor[(2), int32], [3, -4]);
  %2 = annotation.compiler_begin(%1, compiler="ccompiler");
  %3 = add(%0, %2);
  annotation.compiler_end(%3, compiler="ccompiler")
})");
  const nlohmann::json g = tvm_graph_json(m.main());
  bool found = false;
  for (const auto& node : g.at("nodes")) {
    if (node.at("kind") != "const") continue;
    found = true;
    EXPECT_EQ(node.at("dtype"), "int32");
    EXPECT_EQ(node.at("shape"), nlohmann::json::array({2}));
    EXPECT_EQ(node.at("values"), nlohmann::json::array({3, -4}));
  }
  EXPECT_TRUE(found) << g.dump();
}

TEST(TvmDriverText, ConstantPlaceholdersReadBackAsConstants) {
  const nlohmann::json constants = nlohmann::json::parse(
      R"([{"shape": [2], "dtype": "int32", "values": [3, -4]},
          {"shape": [], "dtype": "float32", "values": [1]}])");
  const std::string text = with_constants(
      "def @main(%x: Tensor[(2), int32]) {\n  free_var %aotfuzz_const_0;\n"
      "  %0 = add(%x, %aotfuzz_const_0);\n"
      "  %1 = %aotfuzz_const_1;\n  %aotfuzz_const_10\n}",
      constants);
  EXPECT_NE(text.find("%aotfuzz_const_0 = const(Tensor[(2), int32], [3, -4]);"), std::string::npos)
      << text;
  EXPECT_NE(text.find("%aotfuzz_const_1 = const(float32, [1]);"), std::string::npos) << text;
  // TVM's declaration of the free variable goes with it.
  EXPECT_EQ(text.find("free_var"), std::string::npos) << text;
  // No constant 10: the placeholder stays unbound (and the text then does not read back).
  EXPECT_EQ(text.find("%aotfuzz_const_10 ="), std::string::npos) << text;
  EXPECT_NE(text.find("%aotfuzz_const_10"), std::string::npos) << text;
}

TEST(TvmDriverText, AConstantUsedTwiceReadsBackAsOneNodeInEachFunctionThatUsesIt) {
  const nlohmann::json constants =
      nlohmann::json::parse(R"([{"shape": [2], "dtype": "float32", "values": [1, 2]}])");
  const std::string text = with_constants(
      "def @f(%a: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
      "  %0 = add(%a, %aotfuzz_const_0);\n  add(%0, %aotfuzz_const_0)\n}\n\n"
      "def @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
      "  %0 = @f(%x);\n  add(%0, %aotfuzz_const_0)\n}\n",
      constants);
  const ir::Module m = ir::parse_module(text, "tvm.relay");
  ir::verify(m);
  // @f reads one constant node twice: the printer names it once and uses it twice.
  const std::string f = ir::print_module(m);
  const auto first = f.find("const(Tensor[(2), float32]");
  ASSERT_NE(first, std::string::npos) << f;
  const auto second = f.find("const(Tensor[(2), float32]", first + 1);
  ASSERT_NE(second, std::string::npos) << f;  // @main binds its own
  EXPECT_EQ(f.find("const(Tensor[(2), float32]", second + 1), std::string::npos) << f;
}

TEST(TvmDriverText, MainsPlaceholderParametersGetTheGraphsNamesBackQuotedWhereNeeded) {
  const ir::Module sent = test_support::parse_verified(
      R"(def @main(%"x3:-1": Tensor[(2), float32], %y: Tensor[(2), float32]) {
  add(%"x3:-1", %y)
})");
  const ir::Module back = test_support::parse_verified(
      R"(def @main(%aotfuzz_param_0: Tensor[(2), float32], %aotfuzz_param_1: Tensor[(2), float32]) {
  add(%aotfuzz_param_0, %aotfuzz_param_1)
})");
  const ir::Module named = with_main_params_named(back, sent.main()->params());
  EXPECT_EQ(ir::print_module(named), ir::print_module(sent));
}

TEST(TvmDriverApi, AReleaseWithTheExecutorApiIsBuiltWithExecutorAndRuntimeObjects) {
  // v0.9 to v0.18: relay.build(..., executor=Executor("aot", {...}), runtime=Runtime("crt")).
  CaseOptions o = tvm_options("tests/tvm/fake_tvm_v018", "my_mod");
  o.aot.api = aot::Options::Api::kUnpacked;
  const CaseResult r = run_case(test_support::seed_9036(), o);
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kSutError) << summary(r.verdict);
  const std::string& message = std::get<SutError>(r.verdict.detail).message;
  EXPECT_NE(message.find("target=c executor=Executor(aot"), std::string::npos) << message;
  EXPECT_NE(message.find("('unpacked-api', True)"), std::string::npos) << message;
  EXPECT_NE(message.find("('link-params', True)"), std::string::npos) << message;
  EXPECT_NE(message.find("runtime=Runtime(crt)"), std::string::npos) << message;
}

TEST(TvmDriverApi, AReleaseBeforeItIsBuiltWithTheTargetStringOptions) {
  // v0.8: "c -runtime=c --link-params --executor=aot ..." (the fake raises at build).
  TvmDriverOptions d;
  d.home = test_support::source_path("tests/tvm/fake_tvm").string();
  TvmDriver driver(d);
  const nlohmann::json request = {{"graph", tvm_graph_json(test_support::seed_9036().main())},
                                  {"merge", false},
                                  {"mod_name", "my_mod"},
                                  {"api", "packed"},
                                  {"interface", "packed"}};
  EXPECT_EQ(driver.build(request).status, TvmBuild::Status::kTvmError);
  EXPECT_EQ(driver.api(), "target-string");
  TvmDriverOptions d18;
  d18.home = test_support::source_path("tests/tvm/fake_tvm_v018").string();
  TvmDriver driver18(d18);
  EXPECT_EQ(driver18.build(request).status, TvmBuild::Status::kTvmError);
  EXPECT_EQ(driver18.api(), "executor");
}

TEST(TvmDriverApi, ATvmWithoutRelayIsAToolchainErrorNamingTheSupportedReleases) {
  const CaseResult r =
      run_case(test_support::seed_9036(), tvm_options("tests/tvm/fake_tvm_norelay", "my_mod"));
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kToolchainError) << summary(r.verdict);
  const std::string& why = std::get<ToolchainError>(r.verdict.detail).message;
  EXPECT_NE(why.find("has no Relay"), std::string::npos) << why;
  EXPECT_NE(why.find("v0.8.0 to v0.18.0"), std::string::npos) << why;
  EXPECT_FALSE(is_finding(r.verdict));
}

// --- memory configurations, against the fake TVM v0.18 with USMP (record and replay of real
// v0.18.0 on the seed graph: tests/tvm/fake_tvm_v018_usmp/fixture/README) ---

oracle::MemoryOptions external_pools() {
  oracle::MemoryOptions m;
  m.usmp = true;
  m.pools = oracle::MemoryOptions::Pools::kExternal;
  return m;
}

nlohmann::json usmp_request(const oracle::MemoryOptions& m) {
  return {{"graph", tvm_graph_json(test_support::seed_9036().main())},
          {"merge", true},
          {"mod_name", "default"},
          {"api", "unpacked"},
          {"interface", "c"},
          {"memory",
           {{"usmp", m.usmp},
            {"algorithm", m.usmp_algorithm},
            {"pools", "external"},
            {"workspace_io", m.workspace_io},
            {"workspace_alignment", m.workspace_alignment},
            {"constant_alignment", m.constant_alignment},
            {"link_params", m.link_params},
            {"debug_overlap", m.debug_overlap}}}};
}

TvmDriverOptions driver_at(const std::string& home) {
  TvmDriverOptions d;
  d.home = test_support::source_path(home).string();
  return d;
}

TEST(TvmDriverMemory, TheReadyMessageListsTheFeaturesProbedFromTheTvmImported) {
  TvmDriver usmp(driver_at("tests/tvm/fake_tvm_v018_usmp"));
  for (const char* f : {"usmp", "workspace_io", "usmp_plan", "external_pools", "constant_alignment",
                        "link_params_off"}) {
    EXPECT_TRUE(usmp.has_feature(f)) << f;
  }
  // The fake v0.18 without them: an executor API, but no pass configs, pools or options.
  TvmDriver plain(driver_at("tests/tvm/fake_tvm_v018"));
  for (const char* f : {"usmp", "workspace_io", "usmp_plan", "external_pools", "constant_alignment",
                        "link_params_off"}) {
    EXPECT_FALSE(plain.has_feature(f)) << f;
  }
}

TEST(TvmDriverMemory, AUsmpBuildIsAnsweredWithTheRecordedPlanMetadataAndTheHeader) {
  TvmDriver driver(driver_at("tests/tvm/fake_tvm_v018_usmp"));
  const TvmBuild b = driver.build(usmp_request(external_pools()));
  ASSERT_EQ(b.status, TvmBuild::Status::kOk) << b.message;
  ASSERT_TRUE(b.plan.is_object());
  EXPECT_EQ(b.plan.at("algorithm"), oracle::MemoryOptions().usmp_algorithm);
  ASSERT_FALSE(b.plan.at("buffers").empty());
  for (const auto& buffer : b.plan.at("buffers")) {
    EXPECT_EQ(buffer.at("pool"), "aotfuzz_workspace") << buffer;
    EXPECT_GT(buffer.at("size").get<int>(), 0) << buffer;
  }
  ASSERT_EQ(b.plan.at("pools").size(), 1u);
  EXPECT_EQ(b.plan.at("pools")[0].at("name"), "aotfuzz_workspace");
  EXPECT_FALSE(b.plan.at("pools")[0].at("internal").get<bool>());
  EXPECT_TRUE(b.plan.at("pools")[0].at("size").is_number());
  EXPECT_FALSE(b.plan.contains("debug_overlap"));
  EXPECT_NE(b.metadata.find("\"workspace_size_bytes\": 800"), std::string::npos) << b.metadata;
  bool header = false;
  for (const auto& [name, text] : b.files) header = header || name == "tvmgen_default.h";
  EXPECT_TRUE(header);
}

TEST(TvmDriverMemory, TheCasesFuseOpsLimitReachesTvmsPassContext) {
  TvmDriver driver(driver_at("tests/tvm/fake_tvm_v018_usmp"));
  nlohmann::json request = usmp_request(external_pools());
  request["max_fuse_depth"] = 3;
  request["mod_name"] = "other";  // the fake refuses any other build, naming its config
  const TvmBuild b = driver.build(request);
  ASSERT_NE(b.status, TvmBuild::Status::kOk);
  EXPECT_NE(b.message.find("('relay.FuseOps.max_depth', 3)"), std::string::npos) << b.message;
}

TEST(TvmDriverMemory, TheOverlapFaultMovesTheSecondOfTwoConflictingBuffersOntoTheFirst) {
  TvmDriver driver(driver_at("tests/tvm/fake_tvm_v018_usmp"));
  const TvmBuild plain = driver.build(usmp_request(external_pools()));
  oracle::MemoryOptions m = external_pools();
  m.debug_overlap = true;
  const TvmBuild faulty = driver.build(usmp_request(m));
  ASSERT_EQ(faulty.status, TvmBuild::Status::kOk) << faulty.message;
  ASSERT_TRUE(faulty.plan.contains("debug_overlap"));
  const std::string note = faulty.plan.at("debug_overlap");
  ASSERT_EQ(note.rfind("moved ", 0), 0u) << note;
  std::map<std::string, nlohmann::json> by_name;
  for (const auto& b : faulty.plan.at("buffers")) by_name[b.at("name")] = b;
  const std::string second = note.substr(6, note.find(" onto ") - 6);
  const std::string first = note.substr(note.find(" onto ") + 6);
  EXPECT_EQ(by_name.at(second).at("offset"), by_name.at(first).at("offset"));
  const auto& conflicts = by_name.at(first).at("conflicts");
  EXPECT_NE(std::find(conflicts.begin(), conflicts.end(), second), conflicts.end());
  EXPECT_NE(faulty.plan.at("buffers"), plain.plan.at("buffers"));
}

TEST(TvmCase, TheHarnessCallsTvmsEntryPointWithTheExternalPoolItsHeaderDeclares) {
  CaseOptions o = tvm_options("tests/tvm/fake_tvm_v018_usmp", "default");
  o.aot.api = aot::Options::Api::kUnpacked;
  o.aot.interface = aot::Options::Interface::kC;
  o.memory = external_pools();
  // Known (the run is undefined) unless asked to run past it.
  o.see_past_known = false;
  const CaseResult r = run_case(test_support::seed_9036(), o);
  // The program compiles against TVM's header and runs into TVM's C: v0.18.0 calls the ccompiler
  // region directly with the unpacked API, which its codegen defines with the packed signature
  // (docs/tvm.md, `arity:codegen:external`, `crash:run:SIGSEGV`), with and without USMP.
  ASSERT_EQ(r.verdict.kind(), oracle::VerdictKind::kCrash) << summary(r.verdict);
  EXPECT_EQ(r.verdict.stage, oracle::Stage::kRun);
  bool pool_call = false;
  for (const auto& [name, text] : r.files) {
    if (name == "main.c") {
      pool_call = text.find(
                      "aotfuzz_harness_pool(0, TVMGEN_DEFAULT_AOTFUZZ_WORKSPACE_"
                      "WORKSPACE_POOL_SIZE, 8)") != std::string::npos &&
                  text.find("tvmgen_default_run(&inputs, &outputs, &pools)") != std::string::npos;
    }
  }
  EXPECT_TRUE(pool_call);
}

TEST(TvmCase, ADirectCallOfAPackedByocFunctionIsKnownAndLeftUnrunWhateverTheCounts) {
  CaseOptions o = tvm_options("tests/tvm/fake_tvm_v018_usmp", "default");
  o.aot.api = aot::Options::Api::kUnpacked;
  o.aot.interface = aot::Options::Interface::kC;
  o.memory = external_pools();
  // The counts agree here (two tensors in, two out, the pool: five, as the packed definition's
  // parameters), so only the signature's form tells.
  const CaseResult r = run_case(test_support::seed_9036(), o);
  ASSERT_EQ(r.verdict.kind(), oracle::VerdictKind::kKnown) << summary(r.verdict);
  EXPECT_EQ(signature(r.verdict), "known:codegen:unpacked-call-of-packed-byoc-function");
  EXPECT_FALSE(is_finding(r.verdict));
  for (const auto& [name, text] : r.files) EXPECT_NE(name, "main.c") << "the case was run";
  EXPECT_NE(summary(r.verdict).find("its definition reads packed arguments"), std::string::npos)
      << summary(r.verdict);
}

TEST(TvmCase, ThePlanOracleFindsTheOverlapTheDebugFaultMakesAndNamesThePool) {
  CaseOptions o = tvm_options("tests/tvm/fake_tvm_v018_usmp", "default");
  o.aot.api = aot::Options::Api::kUnpacked;
  o.aot.interface = aot::Options::Interface::kC;
  o.memory = external_pools();
  o.memory.debug_overlap = true;
  const CaseResult r = run_case(test_support::seed_9036(), o);
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kPoolOverlap) << summary(r.verdict);
  EXPECT_EQ(signature(r.verdict), "pool-overlap:codegen:aotfuzz_workspace");
  EXPECT_TRUE(is_finding(r.verdict));
}

TEST(TvmSystem,
     AReleaseWithoutAMemoryFeatureRefusesItsFlagNamingTheReleaseAndTheVersionThatBroughtIt) {
  const auto old =
      make_tvm_system({"tvm", test_support::source_path("tests/tvm/fake_tvm").string(), ""});
  CaseOptions o;
  o.sut = old;
  EXPECT_EQ(old->refuses(o), std::nullopt) << "the defaults are every release's";
  o.memory.usmp = true;
  const auto why = old->refuses(o);
  ASSERT_TRUE(why.has_value());
  EXPECT_NE(why->find("has no --usmp on: it came in v0.9.0"), std::string::npos) << *why;
  EXPECT_EQ(why->find('\n'), std::string::npos) << *why;
  o.memory = {};
  o.memory.link_params = false;
  ASSERT_TRUE(old->refuses(o).has_value());
  EXPECT_NE(old->refuses(o)->find("--no-link-params"), std::string::npos);
  // A release with them takes them, and a campaign on it draws them.
  const auto usmp = make_tvm_system(
      {"tvm", test_support::source_path("tests/tvm/fake_tvm_v018_usmp").string(), ""});
  o = {};
  o.sut = usmp;
  o.memory.usmp = true;
  o.memory.pools = oracle::MemoryOptions::Pools::kExternal;
  o.memory.link_params = false;
  EXPECT_EQ(usmp->refuses(o), std::nullopt);
  std::map<std::string, std::string> knobs;
  for (const auto& [k, v] : usmp->generation_knobs()) knobs[k] = v;
  EXPECT_EQ(knobs.count("p_usmp"), 1u);
  EXPECT_EQ(knobs.count("p_external_pools"), 1u);
  std::map<std::string, std::string> old_knobs;
  for (const auto& [k, v] : old->generation_knobs()) old_knobs[k] = v;
  EXPECT_EQ(old_knobs.count("p_usmp"), 0u);
  EXPECT_EQ(old_knobs.count("p_no_link_params"), 0u);
}

// The seed graph with its regions for the driver's UMA backend instead of the ccompiler.
ir::Module uma_seed() { return test_support::load("tests/tvm/rows/uma_seed.relay"); }

TEST(TvmDriverUma, ATvmWithUmaSaysSoInItsFeaturesAndOneWithoutDoesNot) {
  TvmDriver uma(driver_at("tests/tvm/fake_tvm_uma"));
  EXPECT_TRUE(uma.has_feature("uma"));
  // The fake v0.18 has no UMA package (and says every registered function exists).
  TvmDriver plain(driver_at("tests/tvm/fake_tvm_v018"));
  EXPECT_FALSE(plain.has_feature("uma"));
}

TEST(TvmDriverUma, UmaRegionsAreBuiltForTheCAndUmaTargetsWithTheBackendRegisteredOnce) {
  CaseOptions o = tvm_options("tests/tvm/fake_tvm_uma", "my_mod");
  o.aot.api = aot::Options::Api::kUnpacked;
  o.aot.interface = aot::Options::Interface::kC;
  for (int i = 0; i < 2; ++i) {
    // One driver serves both cases: the second finds the target kind registered.
    const CaseResult r = run_case(uma_seed(), o);
    ASSERT_EQ(r.verdict.kind(), VerdictKind::kSutError) << summary(r.verdict);
    const std::string& message = std::get<SutError>(r.verdict.detail).message;
    EXPECT_NE(message.find("target=[c, aotfuzz_uma] uma_registrations=['aotfuzz_uma']"),
              std::string::npos)
        << message;
  }
  // A graph of ccompiler regions is built for the C target alone, as before.
  const CaseResult r = run_case(test_support::seed_9036(), o);
  ASSERT_EQ(r.verdict.kind(), VerdictKind::kSutError) << summary(r.verdict);
  EXPECT_NE(std::get<SutError>(r.verdict.detail).message.find("target=c "), std::string::npos)
      << summary(r.verdict);
}

TEST(TvmDriverUma, ATvmWithoutUmaRefusesUmaRegionsAsAToolchainErrorNamingTheReleaseAndSwitch) {
  for (const char* home : {"tests/tvm/fake_tvm_v018", "tests/tvm/fake_tvm"}) {
    const CaseResult r = run_case(uma_seed(), tvm_options(home, "my_mod"));
    ASSERT_EQ(r.verdict.kind(), VerdictKind::kToolchainError) << home << ": " << summary(r.verdict);
    const auto& why = std::get<ToolchainError>(r.verdict.detail);
    EXPECT_EQ(why.message.find('\n'), std::string::npos) << why.message;
    EXPECT_NE(why.message.find("v0.10.0"), std::string::npos) << why.message;
    EXPECT_NE(why.message.find("USE_UMA"), std::string::npos) << why.message;
    // Other graphs still build: the refusal is this case's, not the system's.
    EXPECT_FALSE(why.system_unusable);
    EXPECT_FALSE(is_finding(r.verdict));
  }
}

TEST(TvmDriverUma, PartitioningUmaRegionsNeedsNoUma) {
  // --no-run compares TVM's partitioned module only: PartitionGraph outlines any target.
  CaseOptions o = tvm_options("tests/tvm/fake_tvm_v018", "my_mod");
  o.in_process_only = true;
  const CaseResult r = run_case(uma_seed(), o);
  EXPECT_NE(r.verdict.kind(), VerdictKind::kToolchainError) << summary(r.verdict);
}

TEST(TvmSystemUma, DrawsUmaRegionsOnlyFromATvmThatHasUma) {
  auto targets = [](const std::string& home) {
    const auto system = make_tvm_system({"tvm", test_support::source_path(home).string(), ""});
    for (const auto& [name, value] : system->generation_knobs()) {
      if (name == "targets") return value;
    }
    return std::string();
  };
  EXPECT_EQ(targets("tests/tvm/fake_tvm_uma"), "ccompiler:3,aotfuzz_uma:3,default:2");
  EXPECT_EQ(targets("tests/tvm/fake_tvm_v018"), "");
}

TEST(TvmSystemUma, ATvmWithUmaDrawsHalfItsGraphsForUmaAloneBeyondTheCcompilersLimits) {
  const auto uma =
      make_tvm_system({"tvm", test_support::source_path("tests/tvm/fake_tvm_uma").string(), ""});
  const auto profiles = uma->generation_profiles();
  ASSERT_EQ(profiles.size(), 2u);
  EXPECT_EQ(profiles[0].name, "mixed");
  EXPECT_TRUE(profiles[0].knobs.empty());
  EXPECT_EQ(profiles[1].name, "uma");
  generator::GenPolicy policy;
  for (const auto& [k, v] : uma->generation_knobs()) generator::set_knob(policy, k, v);
  for (const auto& [k, v] : profiles[1].knobs) generator::set_knob(policy, k, v);
  generator::validate(policy);
  bool rank_not_2 = false, int8 = false, other_targets = false;
  for (std::uint64_t seed = 0; seed < 64; ++seed) {
    ir::Rng rng(seed);
    const ir::Module m = generator::generate(policy, rng);
    for (const auto& node : m.main()->body_order()) {
      if (auto t = ir::annotation_target(node.get())) {
        other_targets |= *t != "aotfuzz_uma" && *t != "default";
      }
      const auto& type = node->type();
      if (type->is_tuple()) continue;
      rank_not_2 |= type->shape().size() != 2;
      int8 |= type->dtype() == ir::DType::kInt8;
    }
  }
  EXPECT_TRUE(rank_not_2);
  EXPECT_TRUE(int8);
  EXPECT_FALSE(other_targets);
  // Without UMA there is one profile: the limits.
  const auto plain =
      make_tvm_system({"tvm", test_support::source_path("tests/tvm/fake_tvm_v018").string(), ""});
  EXPECT_TRUE(plain->generation_profiles().empty());
}

TEST(TvmHome, IsCheckedForTvmsPythonPackageAndLibrary) {
  EXPECT_FALSE(tvm_home_problem(test_support::source_path("tests/tvm/fake_tvm").string()));
  EXPECT_TRUE(tvm_home_problem(test_support::source_path("tests/oracle").string()));
  EXPECT_TRUE(tvm_home_problem("/nonexistent/tvm"));
}

}  // namespace
}  // namespace aotfuzz::tvm

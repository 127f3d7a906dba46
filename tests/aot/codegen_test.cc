// Tests of C code generation: the seed module and the conformance graphs compiled with tcc, gcc
// and clang under -Werror and run against the reference interpreter, call arities (IR-derived,
// static), the #9036 bug switch, determinism, option checks and the C interface header.
#include <gtest/gtest.h>

#include <filesystem>
#include <regex>
#include <sstream>

#include "aot/codegen.h"
#include "aot/codegen_error.h"
#include "aot/storage_plan.h"
#include "ir/parser.h"
#include "oracle/static_arity.h"
#include "reference/c_interface.h"
#include "reference/inputs.h"
#include "reference/tvm_passes.h"
#include "tests/support/codegen_run.h"
#include "tests/support/files.h"
#include "tests/support/modules.h"

namespace aotfuzz::aot {
namespace {

using host::CompilerKind;
using test_support::BuildConfig;
using test_support::compile_and_run;
using test_support::expect_matches;
using test_support::expected_outputs;
using test_support::fused_of;
using test_support::parse_verified;
using test_support::seed_9036;
using Api = Options::Api;
using Interface = Options::Interface;

Options make_options(Api api, Interface interface) {
  Options o;
  o.api = api;
  o.interface = interface;
  return o;
}

// Every api x interface combination TVM accepts.
const std::vector<std::pair<Api, Interface>> kCombinations = {
    {Api::kPacked, Interface::kPacked},
    {Api::kUnpacked, Interface::kPacked},
    {Api::kUnpacked, Interface::kC},
};

std::string combo_name(Api api, Interface interface) {
  return std::string(api == Api::kPacked ? "packed_api" : "unpacked_api") +
         (interface == Interface::kPacked ? "_packed_interface" : "_c_interface");
}

struct SeedCase {
  CompilerKind compiler;
  Api api;
  Interface interface;
};

class SeedOnEveryCompiler : public ::testing::TestWithParam<SeedCase> {};

TEST_P(SeedOnEveryCompiler, CompilesUnderWerrorAndMatchesTheReference) {
  const auto& p = GetParam();
  const ir::Module annotated = seed_9036();
  const ir::Module fused = fused_of(annotated);
  const auto inputs = reference::make_inputs(annotated.main(), 9036);
  BuildConfig config;
  config.kind = p.compiler;
  if (p.compiler != CompilerKind::kTcc) config.extra_flags = {"-pedantic"};
  const auto r = compile_and_run(fused, make_options(p.api, p.interface), inputs, config);
  expect_matches(r, expected_outputs(annotated, inputs), fused.main());
}

std::vector<SeedCase> seed_cases() {
  std::vector<SeedCase> out;
  for (CompilerKind c : {CompilerKind::kTcc, CompilerKind::kGcc, CompilerKind::kClang}) {
    for (const auto& [api, interface] : kCombinations) out.push_back({c, api, interface});
  }
  return out;
}

INSTANTIATE_TEST_SUITE_P(Codegen, SeedOnEveryCompiler, ::testing::ValuesIn(seed_cases()),
                         [](const ::testing::TestParamInfo<SeedCase>& info) {
                           return std::string(host::compiler_kind_name(info.param.compiler)) +
                                  "_" + combo_name(info.param.api, info.param.interface);
                         });

// The conformance graphs the pipeline accepts (those with a `// check error` line it refuses).
bool c_interface_refuses(const ir::Module& m) {
  try {
    reference::c_interface_input_names(m.main());
    return false;
  } catch (const reference::TvmRefuses&) {
    return true;
  }
}

TEST(Codegen, ConformanceGraphsMatchTheReferenceWithAndWithoutMerging) {
  std::vector<std::filesystem::path> files;
  for (const auto& path : test_support::conformance_files()) {
    if (test_support::read_text(path).find("// check error") == std::string::npos) {
      files.push_back(path);
    }
  }
  ASSERT_GE(files.size(), 5u);
  for (const auto& file : files) {
    const ir::Module annotated = ir::parse_module(test_support::read_text(file), file.string());
    const auto inputs = reference::make_inputs(annotated.main(), 7);
    const auto expected = expected_outputs(annotated, inputs);
    for (bool merge : {false, true}) {
      SCOPED_TRACE(file.filename().string() + (merge ? " merged" : " unmerged"));
      const ir::Module fused = fused_of(annotated, merge);
      for (const auto& [api, interface] : kCombinations) {
        SCOPED_TRACE(combo_name(api, interface));
        // Input names TVM's C interface refuses (tvm_name_sanitiser_name_clash) are refused.
        if (interface == Interface::kC && c_interface_refuses(annotated)) {
          EXPECT_THROW(generate_c(fused, make_options(api, interface)), CodegenRefusal);
          continue;
        }
        expect_matches(compile_and_run(fused, make_options(api, interface), inputs), expected,
                       fused.main());
      }
    }
  }
}

TEST(Codegen, RefusesTheCInterfaceWithThePackedApi) {
  const ir::Module fused = fused_of(seed_9036());
  try {
    generate_c(fused, make_options(Api::kPacked, Interface::kC));
    FAIL() << "expected CodegenError";
  } catch (const CodegenError& e) {
    EXPECT_NE(std::string(e.what()).find("unpacked"), std::string::npos) << e.what();
  }
}

TEST(Codegen, RefusesAModNameThatIsNotACIdentifier) {
  Options o;
  o.mod_name = "my-mod";
  EXPECT_THROW(generate_c(fused_of(seed_9036()), o), CodegenError);
}

TEST(Codegen, SameModuleGivesTheSameBytes) {
  for (const auto& [api, interface] : kCombinations) {
    const auto a = generate_c(fused_of(seed_9036()), make_options(api, interface));
    const auto b = generate_c(fused_of(seed_9036()), make_options(api, interface));
    ASSERT_EQ(a.files.size(), 3u);
    EXPECT_EQ(a.files, b.files);
    EXPECT_EQ(a.expected_arity, b.expected_arity);
  }
}

TEST(Codegen, WritesTheRuntimeHeaderTheInterfaceHeaderAndTheLibrary) {
  Options o = make_options(Api::kUnpacked, Interface::kC);
  o.mod_name = "my_mod";
  const auto src = generate_c(fused_of(seed_9036(), true, "my_mod"), o);
  ASSERT_EQ(src.files.size(), 3u);
  EXPECT_EQ(src.files[0].first, "aotfuzz_runtime.h");
  EXPECT_EQ(src.files[0].second, std::string(runtime_header_text()));
  EXPECT_EQ(src.files[1].first, "tvmgen_my_mod.h");
  EXPECT_EQ(src.files[2].first, "tvmgen_my_mod_lib.c");
  // Every function the library defines carries the module's prefix.
  const std::regex def(R"(^(?:static )?int32_t ([A-Za-z_0-9]+)\()");
  std::size_t defs = 0;
  std::istringstream lines(src.file("tvmgen_my_mod_lib.c"));
  for (std::string line; std::getline(lines, line);) {
    std::smatch m;
    if (std::regex_search(line, m, def)) {
      ++defs;
      EXPECT_EQ(m[1].str().rfind("tvmgen_my_mod_", 0), 0u) << line;
    }
  }
  EXPECT_GE(defs, 5u);  // prototypes and definitions of kernel, external, run_model, run
  EXPECT_THROW(src.file("missing.c"), CodegenError);
}

TEST(Codegen, ExpectedArityCountsFlattenedInputsAndOutputsOfEachCallee) {
  const auto src = generate_c(fused_of(seed_9036()));
  const std::vector<CallSiteInfo> want = {
      {"tvmgen_default_ccompiler_main_0", 5, true},  // 3 inputs + 2 outputs
      {"tvmgen_default_fused_add", 3, true},         // a 2-tensor tuple + 1 output
  };
  EXPECT_EQ(src.expected_arity, want);
}

TEST(Codegen, StaticArityOfTheExecutorAgreesWithTheIr) {
  for (bool merge : {false, true}) {
    const ir::Module fused = fused_of(seed_9036(), merge);
    for (const auto& [api, interface] : kCombinations) {
      const auto src = generate_c(fused, make_options(api, interface));
      const auto actual = oracle::static_arity(src.file("tvmgen_default_lib.c"), "default");
      EXPECT_EQ(actual, src.expected_arity) << combo_name(api, interface);
      EXPECT_TRUE(oracle::arity_differences(src.expected_arity, actual).empty());
    }
  }
}

TEST(Codegen, TupleArgFirstFieldOnlyBugPassesTwoArgumentsWhereTheFusedAddTakesThree) {
  Options o;
  o.bugs.enable(Bug::kTupleArgFirstFieldOnly);
  const auto src = generate_c(fused_of(seed_9036()), o);
  const auto actual = oracle::static_arity(src.file("tvmgen_default_lib.c"));
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_EQ(actual[1].callee, "tvmgen_default_fused_add");
  EXPECT_EQ(actual[1].num_args, 2);
  EXPECT_EQ(src.expected_arity[1].num_args, 3);
  const auto diffs = oracle::arity_differences(src.expected_arity, actual);
  ASSERT_EQ(diffs.size(), 1u);
  EXPECT_EQ(diffs[0].first.callee, "tvmgen_default_fused_add");
}

TEST(Codegen, UnpackedApiCallsKernelsDirectlyAndExternalFunctionsPacked) {
  const auto src = generate_c(fused_of(seed_9036()), make_options(Api::kUnpacked, Interface::kC));
  const auto actual = oracle::static_arity(src.file("tvmgen_default_lib.c"));
  ASSERT_EQ(actual.size(), 2u);
  EXPECT_TRUE(actual[0].packed);
  EXPECT_FALSE(actual[1].packed);
  EXPECT_EQ(actual[1].num_args, 3);
  EXPECT_NE(src.file("tvmgen_default_lib.c")
                .find("if (tvmgen_default_fused_add(sid_0, sid_1, output_0) != 0) return -1;"),
            std::string::npos);
}

TEST(Codegen, StaleUnpackedArgBugKeepsTheArityButPassesAnotherBuffer) {
  Options o = make_options(Api::kUnpacked, Interface::kPacked);
  const ir::Module fused = fused_of(seed_9036());
  const auto good = generate_c(fused, o);
  o.bugs.enable(Bug::kStaleUnpackedArg);
  const auto bad = generate_c(fused, o);
  EXPECT_EQ(oracle::static_arity(bad.file("tvmgen_default_lib.c")), bad.expected_arity);
  EXPECT_NE(good.file("tvmgen_default_lib.c"), bad.file("tvmgen_default_lib.c"));
  // The second tuple field comes from the previous call's second argument (input w0).
  EXPECT_NE(bad.file("tvmgen_default_lib.c")
                .find("if (tvmgen_default_fused_add(sid_0, input_1, output_0) != 0) return -1;"),
            std::string::npos);
}

TEST(Codegen, EveryPackedFunctionTracesItsCallsAndOnlyThose) {
  auto count = [](const std::string& text, const std::string& what) {
    std::size_t n = 0;
    for (std::size_t p = text.find(what); p != std::string::npos; p = text.find(what, p + 1)) ++n;
    return n;
  };
  const ir::Module fused = fused_of(seed_9036());
  EXPECT_EQ(count(generate_c(fused).file("tvmgen_default_lib.c"), "AOTFUZZ_TRACE_CALL("), 2u);
  const auto unpacked = generate_c(fused, make_options(Api::kUnpacked, Interface::kC));
  EXPECT_EQ(count(unpacked.file("tvmgen_default_lib.c"), "AOTFUZZ_TRACE_CALL("), 1u);
  Options checked;
  checked.check_num_args = true;
  const auto src = generate_c(fused, checked).file("tvmgen_default_lib.c");
  EXPECT_NE(src.find("if (num_args != 5) return -1;"), std::string::npos);
  EXPECT_NE(src.find("if (num_args != 3) return -1;"), std::string::npos);
  EXPECT_EQ(count(generate_c(fused).file("tvmgen_default_lib.c"), "num_args != "), 0u);
}

TEST(Codegen, BroadcastingAndWrappingIntegerArithmeticMatchTheReferenceUnderSanitizers) {
  // Host kernels over float32, int32 and int8 with NumPy broadcasting, and an external function
  // with two outputs; inputs are biased to extremes, so int32/int8 arithmetic overflows.
  const ir::Module fused = parse_verified(R"(
def @main(%a: Tensor[(4, 1, 3), int32], %b: Tensor[(5, 1), int32], %c: Tensor[(2, 3), int8],
          %d: int8, %e: Tensor[(3), float32], %f: Tensor[(2, 1), float32]) {
  %0 = fn (%p0: Tensor[(4, 1, 3), int32], %p1: Tensor[(5, 1), int32], Primitive=1) {
    %1 = multiply(%p0, %p1);
    %2 = subtract(%1, %p1);
    add(%2, %p0)
  };
  %3 = %0(%a, %b);
  %4 = fn (%p0: Tensor[(2, 3), int8], %p1: int8, Primitive=1) {
    %5 = multiply(%p0, %p1);
    %6 = add(%5, %p0);
    subtract(%6, %p1)
  };
  %7 = %4(%c, %d);
  %8 = @tvmgen_default_ccompiler_main_0(%e, %f);
  %9 = %8.1;
  %10 = fn (%p0: Tensor[(2, 3), float32], Primitive=1) { multiply(%p0, %p0) };
  %11 = %10(%9);
  (%3, %7, %8.0, %11)
}

def @tvmgen_default_ccompiler_main_0(%i0: Tensor[(3), float32], %i1: Tensor[(2, 1), float32],
    Inline=1, Compiler="ccompiler", global_symbol="tvmgen_default_ccompiler_main_0", Primitive=1) {
  %0 = add(%i0, %i1);
  %1 = subtract(%0, %i0);
  (%1, %0)
}
)");
  // gcc on every combination and two seeds, clang on one (sanitized builds are slow).
  struct Case {
    CompilerKind kind;
    Api api;
    Interface interface;
    std::uint64_t seed;
  };
  std::vector<Case> cases;
  for (std::uint64_t seed : {1u, 2u}) {
    for (const auto& [api, interface] : kCombinations) {
      cases.push_back({CompilerKind::kGcc, api, interface, seed});
    }
  }
  cases.push_back({CompilerKind::kClang, Api::kPacked, Interface::kPacked, 3});
  for (const auto& c : cases) {
    SCOPED_TRACE(std::string(host::compiler_kind_name(c.kind)) + " " +
                 combo_name(c.api, c.interface) + " seed " + std::to_string(c.seed));
    const auto inputs = reference::make_inputs(fused.main(), c.seed);
    BuildConfig config;
    config.kind = c.kind;
    config.sanitize = true;
    const auto r = compile_and_run(fused, make_options(c.api, c.interface), inputs, config);
    expect_matches(r, expected_outputs(fused, inputs), fused.main());
    EXPECT_EQ(r.run.stderr_text, "");
  }
}

TEST(Codegen, ConstantsOfMainKernelsAndExternalFunctionsMatchTheReferenceOnEveryCombination) {
  // Constants everywhere they can be after the passes: a scalar fused into a kernel, a tensor
  // passed to a kernel, a bound constant and a bound tuple of constants in an external function,
  // a constant returned by @main, and (in the external function) a tuple field never read,
  // which must not be defined (an unused static array is a -Werror failure).
  const ir::Module fused = parse_verified(R"(
def @main(%x: Tensor[(2, 3), int32], %y: Tensor[(3), float32]) {
  %0 = const(Tensor[(3), int32], [-2147483648, 2147483647, 5]);
  %1 = fn (%p0: Tensor[(2, 3), int32], %p1: Tensor[(3), int32], Primitive=1) {
    %2 = const(int32, [3]);
    %3 = multiply(%p0, %2);
    add(%3, %p1)
  };
  %4 = %1(%x, %0);
  %5 = @tvmgen_default_ccompiler_main_0(%y);
  (%4, %5, %0)
}

def @tvmgen_default_ccompiler_main_0(%i0: Tensor[(3), float32],
    Inline=1, Compiler="ccompiler", global_symbol="tvmgen_default_ccompiler_main_0", Primitive=1) {
  %0 = const(Tensor[(3), float32], [1, -2, 3]);
  %1 = (const(Tensor[(2, 3), float32], [1, 2, 3, 4, 5, 6]), const(float32, [-9]));
  %2 = add(%i0, %0);
  (multiply(%2, %1.1), %0)
}
)");
  for (const auto& [api, interface] : kCombinations) {
    SCOPED_TRACE(combo_name(api, interface));
    const auto inputs = reference::make_inputs(fused.main(), 5);
    BuildConfig config;
    config.kind = CompilerKind::kGcc;
    const auto r = compile_and_run(fused, make_options(api, interface), inputs, config);
    expect_matches(r, expected_outputs(fused, inputs), fused.main());
  }
  const std::string c = generate_c(fused).file("tvmgen_default_lib.c");
  EXPECT_NE(c.find("static const int32_t tvmgen_default_constant_0[3] = {(-2147483647 - 1), "
                   "2147483647, 5};"),
            std::string::npos)
      << c;
  EXPECT_NE(c.find("static const float c0[3] = {1, -2, 3};"), std::string::npos) << c;
  EXPECT_NE(c.find("static const float c2[1] = {-9};"), std::string::npos) << c;
  EXPECT_EQ(c.find("c1["), std::string::npos) << c;  // the unread tuple field
}

TEST(Codegen, StorageReuseKeepsResultsEqualToTheReference) {
  // A chain of host kernels: with reuse, intermediates share buffers.
  const std::string t = "Tensor[(6, 5), float32]";
  auto prim = [&](const std::string& op) {
    return "fn (%p0: " + t + ", %p1: " + t + ", Primitive=1) { " + op + "(%p0, %p1) }";
  };
  std::string text = "def @main(%x: " + t + ", %y: " + t + ") {\n  %0 = " + prim("add") +
                     ";\n  %1 = %0(%x, %y);\n";
  int next = 2;
  std::string last = "%1";
  for (const char* op : {"multiply", "subtract", "add", "multiply", "add"}) {
    const std::string f = "%" + std::to_string(next++);
    const std::string v = "%" + std::to_string(next++);
    text += "  " + f + " = " + prim(op) + ";\n  " + v + " = " + f + "(" + last + ", %x);\n";
    last = v;
  }
  text += "  " + last + "\n}\n";
  const ir::Module fused = parse_verified(text);
  const auto inputs = reference::make_inputs(fused.main(), 11);
  const auto expected = expected_outputs(fused, inputs);
  StorageOptions plain;
  plain.reuse = false;
  EXPECT_LT(plan_storage(fused.main()).buffers.size(),
            plan_storage(fused.main(), plain).buffers.size());
  for (bool reuse : {true, false}) {
    Options o;
    o.storage_reuse = reuse;
    const auto r = compile_and_run(fused, o, inputs);
    expect_matches(r, expected, fused.main());
    const std::string lib = r.sources.file("tvmgen_default_lib.c");
    EXPECT_EQ(lib.find("sid_2") == std::string::npos, reuse) << lib;
  }
}

TEST(Codegen, RejectsConstructsOutsideTheFusedModuleShape) {
  const std::string t = "Tensor[(2), float32]";
  // An operator left in @main.
  EXPECT_THROW(generate_c(parse_verified("def @main(%x: " + t + ") { add(%x, %x) }")),
               CodegenError);
  // A call of a global function without a Compiler attribute.
  EXPECT_THROW(generate_c(parse_verified("def @main(%x: " + t + ") { @f(%x) }\ndef @f(%y: " + t +
                                         ") { add(%y, %y) }")),
               CodegenError);
  // A local function that is not primitive.
  EXPECT_THROW(generate_c(parse_verified("def @main(%x: " + t + ") { %0 = fn (%p0: " + t +
                                         ") { add(%p0, %p0) }; %0(%x) }")),
               ir::Error);
}

TEST(Codegen, CInterfaceFieldNamesAreSanitisedAsTvmNamesThem) {
  const auto t = ir::TypeNode::tensor({2}, ir::DType::kFloat32);
  std::vector<ir::Var> params = {ir::VarNode::make("in-put", t), ir::VarNode::make("input::-1", t),
                                 ir::VarNode::make("a", t),
                                 ir::VarNode::make("pair", ir::TypeNode::tuple({t, t}))};
  const auto main1 = ir::FunctionNode::make(params, params[0]);
  EXPECT_EQ(input_field_names(main1),
            (std::vector<std::string>{"in_put", "input___1", "a", "pair_0", "pair_1"}));
  EXPECT_EQ(output_field_names(main1), (std::vector<std::string>{"output"}));
  const auto main2 = ir::FunctionNode::make(params, ir::TupleNode::make({params[0], params[3]}));
  EXPECT_EQ(output_field_names(main2), (std::vector<std::string>{"output0", "output1", "output2"}));
}

TEST(Codegen, CInterfaceInputNamesTvmCannotUseAreRefusedAsTvmRefusesThem) {
  const auto t = ir::TypeNode::tensor({2}, ir::DType::kFloat32);
  const auto main_of = [&](std::vector<std::string> names) {
    std::vector<ir::Var> params;
    for (auto& n : names) params.push_back(ir::VarNode::make(std::move(n), t));
    return ir::FunctionNode::make(params, params[0]);
  };
  const auto refusal = [&](std::vector<std::string> names) -> std::string {
    try {
      input_field_names(main_of(std::move(names)));
    } catch (const CodegenRefusal& e) {
      return e.what();
    }
    return "";
  };
  // TVM's test_name_sanitiser_name_clash: two names, one field.
  EXPECT_NE(refusal({"input::-1", "input::-2", "input:--2"})
                .find("Sanitized input tensor name clash: input___2"),
            std::string::npos);
  // A field that is no C identifier: TVM's header would not compile.
  EXPECT_NE(refusal({"int"}).find("not an identifier"), std::string::npos);
  EXPECT_NE(refusal({"0x"}).find("not an identifier"), std::string::npos);
  EXPECT_EQ(refusal({"x:0", "x:1"}), "");
  // The injectable bugs: a suffixed field instead of the refusal; the names as given.
  EXPECT_EQ(
      input_field_names(main_of({"x:0", "x-0"}), BugSet().enable(Bug::kDeduplicatedInputNames)),
      (std::vector<std::string>{"x_0", "x_0_1"}));
  EXPECT_EQ(
      input_field_names(main_of({"x:0", "x-0"}), BugSet().enable(Bug::kUnsanitizedInputNames)),
      (std::vector<std::string>{"x:0", "x-0"}));
}

TEST(Codegen, CInterfaceHeaderDeclaresTheStructsAndTheEntryPoint) {
  const auto src = generate_c(fused_of(seed_9036()), make_options(Api::kUnpacked, Interface::kC));
  const std::string& h = src.file("tvmgen_default.h");
  for (const char* want :
       {"struct tvmgen_default_inputs {", "void* x;", "void* w0;", "void* w1;",
        "struct tvmgen_default_outputs {", "void* output;",
        "int32_t tvmgen_default_run(struct tvmgen_default_inputs* inputs, struct "
        "tvmgen_default_outputs* outputs);",
        "#define TVMGEN_DEFAULT_WORKSPACE_SIZE 800"}) {
    EXPECT_NE(h.find(want), std::string::npos) << want << "\n" << h;
  }
}

}  // namespace
}  // namespace aotfuzz::aot

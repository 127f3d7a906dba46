// Tests of the harness program: generated models run under it (call trace, return codes,
// outputs), every injected codegen/storage bug is caught by one of its checks, hand-written fake
// models trip its guards (read-only inputs, output guard pages, poison), and the report parser.
#include <gtest/gtest.h>

#include <fstream>

#include "host/process.h"
#include "host/tempdir.h"
#include "oracle/harness.h"
#include "reference/inputs.h"
#include "tests/support/codegen_run.h"
#include "tests/support/modules.h"
#include "tests/support/processes.h"

namespace aotfuzz::oracle {
namespace {

using aot::Bug;
using aot::Options;
using test_support::compile_and_run;
using test_support::expect_matches;
using test_support::expected_outputs;
using test_support::fused_of;
using test_support::parse_verified;
using test_support::seed_9036;

constexpr const char* kT = "Tensor[(4, 4), float32]";

std::string prim(const std::string& op) {
  return std::string("fn (%p0: ") + kT + ", %p1: " + kT + ", Primitive=1) { " + op + "(%p0, %p1) }";
}

// a = x + y; b = a * x; c = b - y; out = a + c.
ir::Module diamond() {
  return parse_verified(std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +
                        "  %0 = " + prim("add") + ";\n  %1 = %0(%x, %y);\n" +       //
                        "  %2 = " + prim("multiply") + ";\n  %3 = %2(%1, %x);\n" +  //
                        "  %4 = " + prim("subtract") + ";\n  %5 = %4(%3, %y);\n" +  //
                        "  %6 = " + prim("add") + ";\n  %6(%1, %5)\n}\n");
}

// a = x + y; returns (a * x, a - y).
ir::Module two_outputs() {
  return parse_verified(std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +
                        "  %0 = " + prim("add") + ";\n  %1 = %0(%x, %y);\n" +       //
                        "  %2 = " + prim("multiply") + ";\n  %3 = %2(%1, %x);\n" +  //
                        "  %4 = " + prim("subtract") + ";\n  %5 = %4(%1, %y);\n" +  //
                        "  (%3, %5)\n}\n");
}

// Returns (x + y, x + y, x): a repeated output and an input passed through.
ir::Module repeated_outputs() {
  return parse_verified(std::string("def @main(%x: ") + kT + ", %y: " + kT + ") {\n" +
                        "  %0 = " + prim("add") + ";\n  %1 = %0(%x, %y);\n  (%1, %1, %x)\n}\n");
}

// True when some output differs from the reference.
bool mismatches(const test_support::RunOutcome& r, const ir::Module& m,
                const std::vector<reference::Value>& inputs) {
  const auto expected = expected_outputs(m, inputs);
  const auto actual = output_values(r.parsed, m.main());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    if (reference::first_mismatch(expected[i], actual[i])) return true;
  }
  return false;
}

TEST(Harness, TracesEveryPackedCallWithItsArgumentCountInBothRuns) {
  const ir::Module fused = fused_of(seed_9036());
  const auto inputs = reference::make_inputs(fused.main(), 1);
  const auto r = compile_and_run(fused, {}, inputs);
  expect_matches(r, expected_outputs(fused, inputs), fused.main());
  const std::vector<TraceCall> want = {{"tvmgen_default_ccompiler_main_0", 5},
                                       {"tvmgen_default_fused_add", 3}};
  // Runs 1 and 2, then the fault runs failing call 1 (also the middle one) and call 2, then the
  // workspace allocation, before any call.
  ASSERT_EQ(r.parsed.traces.size(), 5u);
  EXPECT_EQ(r.parsed.traces[0], want);
  EXPECT_EQ(r.parsed.traces[1], want);
  EXPECT_EQ(r.parsed.traces[2], (std::vector<TraceCall>{want[0]}));
  EXPECT_EQ(r.parsed.traces[3], want);
  EXPECT_TRUE(r.parsed.traces[4].empty());
  EXPECT_TRUE(r.parsed.other_lines.empty());
}

TEST(Harness, EachFaultRunFailsOneCallAndTheRunReturnsTheFailureAtOnce) {
  const ir::Module m = diamond();
  const auto inputs = reference::make_inputs(m.main(), 2);
  for (auto api : {Options::Api::kPacked, Options::Api::kUnpacked}) {
    Options o;
    o.api = api;
    const auto r = compile_and_run(m, o, inputs);
    expect_matches(r, expected_outputs(m, inputs), m.main());
    // Four calls: the first, the middle (2) and the last fail in turn, then the workspace
    // allocation (call 0).
    EXPECT_EQ(r.parsed.faults,
              (std::vector<FaultRun>{{1, -1, 0}, {2, -1, 0}, {4, -1, 0}, {0, -1, 0}}));
  }
}

TEST(Harness, IgnoredKernelErrorBugLetsAFaultRunReturnZeroAndGoOnCalling) {
  const ir::Module m = diamond();
  const auto inputs = reference::make_inputs(m.main(), 2);
  Options o;
  o.api = Options::Api::kUnpacked;
  o.bugs.enable(Bug::kIgnoredKernelError);
  const auto r = compile_and_run(m, o, inputs);
  expect_matches(r, expected_outputs(m, inputs), m.main());
  // The executor still checks its workspace allocation.
  EXPECT_EQ(r.parsed.faults,
            (std::vector<FaultRun>{{1, 0, 3}, {2, 0, 2}, {4, 0, 0}, {0, -1, 0}}));
}

TEST(Harness, WorkspaceUndersizedBugWritesPastTheWorkspaceIntoItsGuardPage) {
  const ir::Module fused = fused_of(seed_9036());
  const auto inputs = reference::make_inputs(fused.main(), 1);
  Options o;
  o.bugs.enable(Bug::kWorkspaceUndersized);
  const auto r = compile_and_run(fused, o, inputs);
  EXPECT_EQ(r.run.kind, host::ExitKind::kSignaled) << r.run.describe();
  ASSERT_TRUE(r.parsed.out_of_bounds.has_value()) << r.run.stdout_text;
  EXPECT_EQ(*r.parsed.out_of_bounds, (std::pair<std::string, int>{"workspace", 0}));
}

TEST(Harness, DLTensorFieldsUnsetBugIsRefusedByTheKernelsArgumentCheck) {
  const ir::Module fused = fused_of(seed_9036());
  const auto inputs = reference::make_inputs(fused.main(), 1);
  Options o;
  o.bugs.enable(Bug::kDLTensorFieldsUnset);
  const auto r = compile_and_run(fused, o, inputs);
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  EXPECT_EQ(r.parsed.rcs, (std::vector<int>{-1, -1}));
  EXPECT_EQ(r.parsed.arg_error, (std::pair<std::string, int>{"tvmgen_default_fused_add", 0}));
}

TEST(Harness, Bug9036WritesIntoAnInputAndTheHarnessReportsItClobbered) {
  const ir::Module fused = fused_of(seed_9036());
  const auto inputs = reference::make_inputs(fused.main(), 1);
  Options o;
  o.bugs.enable(Bug::kTupleArgFirstFieldOnly);
  const auto r = compile_and_run(fused, o, inputs);
  // The kernel's output slot is the stale third slot of the external call: input w1.
  EXPECT_EQ(r.run.kind, host::ExitKind::kExited);
  EXPECT_EQ(r.run.exit_code, kInputClobberedExit);
  ASSERT_TRUE(r.parsed.clobbered_input.has_value()) << r.run.stdout_text;
  EXPECT_EQ(r.parsed.clobbered_input->first, 2);
  EXPECT_EQ(r.parsed.clobbered_input->second, 0);
  EXPECT_FALSE(r.parsed.completed);
  ASSERT_EQ(r.parsed.traces.size(), 1u);
  EXPECT_EQ(r.parsed.traces[0], (std::vector<TraceCall>{{"tvmgen_default_ccompiler_main_0", 5},
                                                        {"tvmgen_default_fused_add", 2}}));
}

TEST(Harness, WithArgumentChecksBug9036FailsTheRunAndLeavesTheOutputUnwritten) {
  const ir::Module fused = fused_of(seed_9036());
  const auto inputs = reference::make_inputs(fused.main(), 1);
  Options o;
  o.check_num_args = true;
  o.bugs.enable(Bug::kTupleArgFirstFieldOnly);
  const auto r = compile_and_run(fused, o, inputs);
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  EXPECT_EQ(r.parsed.rcs, (std::vector<int>{-1, -1}));
  EXPECT_EQ(r.parsed.unwritten, (std::vector<std::pair<int, std::int64_t>>{{0, 0}}));
  EXPECT_FALSE(r.parsed.clobbered_input.has_value());
}

TEST(Harness, StaleUnpackedArgBugGivesWrongOutputs) {
  const ir::Module fused = fused_of(seed_9036());
  const auto inputs = reference::make_inputs(fused.main(), 3);
  Options o;
  o.api = Options::Api::kUnpacked;
  ASSERT_FALSE(mismatches(compile_and_run(fused, o, inputs), fused, inputs));
  o.bugs.enable(Bug::kStaleUnpackedArg);
  const auto r = compile_and_run(fused, o, inputs);
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  EXPECT_TRUE(mismatches(r, fused, inputs));
}

TEST(Harness, ReuseLiveStorageBugGivesWrongOutputs) {
  const ir::Module m = diamond();
  const auto inputs = reference::make_inputs(m.main(), 5);
  Options o;
  ASSERT_FALSE(mismatches(compile_and_run(m, o, inputs), m, inputs));
  o.bugs.enable(Bug::kReuseLiveStorage);
  const auto r = compile_and_run(m, o, inputs);
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  EXPECT_TRUE(mismatches(r, m, inputs));
}

TEST(Harness, IntermediateInOutputBugGivesWrongOutputs) {
  const ir::Module m = two_outputs();
  const auto inputs = reference::make_inputs(m.main(), 5);
  Options o;
  ASSERT_FALSE(mismatches(compile_and_run(m, o, inputs), m, inputs));
  o.bugs.enable(Bug::kIntermediateInOutput);
  const auto r = compile_and_run(m, o, inputs);
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  EXPECT_TRUE(mismatches(r, m, inputs));
}

TEST(Harness, RepeatedAndPassThroughOutputsAreCopied) {
  const ir::Module m = repeated_outputs();
  const auto inputs = reference::make_inputs(m.main(), 2);
  for (auto api : {Options::Api::kPacked, Options::Api::kUnpacked}) {
    Options o;
    o.api = api;
    expect_matches(compile_and_run(m, o, inputs), expected_outputs(m, inputs), m.main());
  }
}

TEST(Harness, AMainThatReturnsItsInputCopiesItIntoTheOutput) {
  const ir::Module m = parse_verified("def @main(%x: Tensor[(3, 2), int32]) { %x }\n");
  const auto inputs = reference::make_inputs(m.main(), 8);
  Options o;
  o.api = Options::Api::kUnpacked;
  o.interface = Options::Interface::kC;
  const auto r = compile_and_run(m, o, inputs);
  expect_matches(r, expected_outputs(m, inputs), m.main());
  EXPECT_TRUE(r.sources.expected_arity.empty());
}

TEST(Harness, DroppedDuplicateOutputBugIsReportedAsUnwritten) {
  const ir::Module m = repeated_outputs();
  const auto inputs = reference::make_inputs(m.main(), 2);
  Options o;
  o.bugs.enable(Bug::kDroppedDuplicateOutput);
  const auto r = compile_and_run(m, o, inputs);
  ASSERT_TRUE(r.parsed.completed) << r.run.stdout_text;
  EXPECT_EQ(r.parsed.unwritten, (std::vector<std::pair<int, std::int64_t>>{{1, 0}}));
}

TEST(Harness, HandlesScalarAndEmptyTensors) {
  const ir::Module m = parse_verified(R"(
def @main(%x: Tensor[(0, 3), float32], %y: float32, %z: Tensor[(2), int8]) {
  %0 = fn (%p0: Tensor[(0, 3), float32], %p1: float32, Primitive=1) { add(%p0, %p1) };
  %1 = %0(%x, %y);
  %2 = fn (%p0: float32, Primitive=1) { multiply(%p0, %p0) };
  %3 = %2(%y);
  (%1, %3, %z)
}
)");
  const auto inputs = reference::make_inputs(m.main(), 4);
  for (auto api : {Options::Api::kPacked, Options::Api::kUnpacked}) {
    Options o;
    o.api = api;
    o.interface =
        api == Options::Api::kPacked ? Options::Interface::kPacked : Options::Interface::kC;
    const auto r = compile_and_run(m, o, inputs);
    expect_matches(r, expected_outputs(m, inputs), m.main());
    EXPECT_TRUE(r.parsed.outputs[0].empty());
  }
}

TEST(Harness, RejectsInputsThatDoNotMatchMain) {
  const ir::Module fused = fused_of(seed_9036());
  auto inputs = reference::make_inputs(fused.main(), 1);
  inputs.pop_back();
  EXPECT_THROW(harness_c(fused, {}, inputs), HarnessError);
  inputs.push_back(reference::Value::from_f32({2}, {1.0f, 2.0f}));
  EXPECT_THROW(harness_c(fused, {}, inputs), HarnessError);
}

// A module with one (4) float input and one (4) float output, whose generated library is
// replaced by `fake_body` (the body of the packed tvmgen_default_run).
test_support::RunOutcome run_fake_model(const std::string& fake_body) {
  const ir::Module m = parse_verified(
      "def @main(%x: Tensor[(4), float32]) {\n"
      "  %0 = fn (%p0: Tensor[(4), float32], Primitive=1) { add(%p0, %p0) };\n"
      "  %0(%x)\n}\n");
  test_support::RunOutcome out;
  const auto& tc = test_support::toolchain_of(host::CompilerKind::kTcc);
  if (!tc) {
    ADD_FAILURE() << "tcc not found";
    return out;
  }
  out.sources = aot::generate_c(m, {});
  host::TempDir dir("aotfuzz-harness-test");
  for (const auto& [name, content] : out.sources.files) {
    if (name != aot::lib_file_name({})) std::ofstream(dir.file(name)) << content;
  }
  std::ofstream(dir.file("fake.c"))
      << "#include \"aotfuzz_runtime.h\"\n#include \"tvmgen_default.h\"\n"
      << "int32_t tvmgen_default_run(TVMValue* args, int* type_codes, int num_args, TVMValue* "
         "ret, int* ret_code, void* resource) {\n"
      << "  float* in = (float*)((DLTensor*)args[0].v_handle)->data;\n"
      << "  float* out = (float*)((DLTensor*)args[1].v_handle)->data;\n"
      << "  (void)type_codes; (void)num_args; (void)ret; (void)ret_code; (void)resource;\n"
      << "  (void)in; (void)out;\n"
      << fake_body << "\n}\n";
  const auto inputs = reference::make_inputs(m.main(), 1);
  std::ofstream(dir.file("main.c")) << harness_c(m, {}, inputs);
  host::CompileOptions copts;
  copts.include_dirs = {dir.path().string()};
  out.compiled = compile(*tc, {dir.file("main.c").string(), dir.file("fake.c").string()},
                         dir.file("model").string(), copts);
  if (!out.compiled.ok()) {
    ADD_FAILURE() << out.compiled.diagnostics;
    return out;
  }
  out.run = host::run_process({dir.file("model").string()});
  out.parsed = parse_harness_output(out.run.stdout_text);
  return out;
}

TEST(Harness, AWriteIntoAnInputIsReportedWithItsElement) {
  const auto r = run_fake_model("  in[1] = 0.0f; return 0;");
  EXPECT_EQ(r.run.exit_code, kInputClobberedExit) << r.run.describe();
  ASSERT_TRUE(r.parsed.clobbered_input.has_value()) << r.run.stdout_text;
  EXPECT_EQ(*r.parsed.clobbered_input, (std::pair<int, std::int64_t>{0, 1}));
}

TEST(Harness, AWritePastTheEndOfAnOutputHitsItsGuardPage) {
  const auto r =
      run_fake_model("  int i; for (i = 0; i <= 4; ++i) out[i] = in[i < 4 ? i : 0]; return 0;");
  EXPECT_EQ(r.run.kind, host::ExitKind::kSignaled) << r.run.describe();
  EXPECT_EQ(r.run.signal, SIGSEGV);
  ASSERT_TRUE(r.parsed.out_of_bounds.has_value()) << r.run.stdout_text;
  EXPECT_EQ(*r.parsed.out_of_bounds, (std::pair<std::string, int>{"output", 0}));
  EXPECT_FALSE(r.parsed.completed);
}

TEST(Harness, AnElementLeftUnwrittenAndTheReturnCodeAreReported) {
  const auto r = run_fake_model("  out[0] = in[0]; out[1] = in[1]; out[3] = in[3]; return 7;");
  ASSERT_TRUE(r.run.exited_ok()) << r.run.describe();
  ASSERT_TRUE(r.parsed.completed);
  EXPECT_EQ(r.parsed.rcs, (std::vector<int>{7, 7}));
  EXPECT_EQ(r.parsed.unwritten, (std::vector<std::pair<int, std::int64_t>>{{0, 2}}));
  // Run 1's poison shows in the printed output.
  ASSERT_EQ(r.parsed.outputs.size(), 1u);
  ASSERT_EQ(r.parsed.outputs[0].size(), 16u);
  EXPECT_EQ(r.parsed.outputs[0][8], 0xA5);
}

TEST(ParseHarnessOutput, ReadsACompleteReport) {
  const ParsedRun r = parse_harness_output(
      "AOTFUZZ run 1\nf_one 3\ng 2\nAOTFUZZ rc 0\nAOTFUZZ run 2\nf_one 3\ng 2\nAOTFUZZ rc -1\n"
      "AOTFUZZ output-unwritten 1 5\nAOTFUZZ output 0 00ff10\nAOTFUZZ output 1 \n"
      "AOTFUZZ done\n");
  EXPECT_TRUE(r.completed);
  EXPECT_EQ(r.rcs, (std::vector<int>{0, -1}));
  EXPECT_EQ(r.rc(), 0);
  ASSERT_EQ(r.traces.size(), 2u);
  EXPECT_EQ(r.traces[0], (std::vector<TraceCall>{{"f_one", 3}, {"g", 2}}));
  EXPECT_EQ(r.unwritten, (std::vector<std::pair<int, std::int64_t>>{{1, 5}}));
  ASSERT_EQ(r.outputs.size(), 2u);
  EXPECT_EQ(r.outputs[0], (std::vector<std::uint8_t>{0x00, 0xff, 0x10}));
  EXPECT_TRUE(r.outputs[1].empty());
  EXPECT_EQ(r.printed, (std::vector<bool>{true, true}));
  EXPECT_TRUE(r.other_lines.empty());
}

TEST(ParseHarnessOutput, KeepsWhatATruncatedReportSaysAndSetsAsideTheRest) {
  const ParsedRun r = parse_harness_output(
      "stray 1\nAOTFUZZ run 1\nf 5\nAOTFUZZ out-of-bounds output 2\nAOTFUZZ output 0 abc\n"
      "AOTFUZZ bogus\nAOTFUZZ rc x\nhello world again\nAOTFUZZ input-clo");
  EXPECT_FALSE(r.completed);
  EXPECT_FALSE(r.rc().has_value());
  ASSERT_EQ(r.traces.size(), 1u);
  EXPECT_EQ(r.traces[0], (std::vector<TraceCall>{{"f", 5}}));
  EXPECT_EQ(r.out_of_bounds, (std::pair<std::string, int>{"output", 2}));
  EXPECT_TRUE(r.outputs.empty());  // odd hex digits: not an output
  EXPECT_EQ(r.other_lines,
            (std::vector<std::string>{"stray 1", "AOTFUZZ output 0 abc", "AOTFUZZ bogus",
                                      "AOTFUZZ rc x", "hello world again", "AOTFUZZ input-clo"}));
}

TEST(ParseHarnessOutput, ReadsFaultRunsArgumentErrorsAndWorkspaceFaults) {
  const ParsedRun r = parse_harness_output(
      "AOTFUZZ run 3\nf 2\nAOTFUZZ arg-error f 1\nAOTFUZZ arg-error g 0\nAOTFUZZ fault 1 -1 0\n"
      "AOTFUZZ run 4\nAOTFUZZ fault 3 0 2\nAOTFUZZ fault x 0 2\n"
      "AOTFUZZ out-of-bounds workspace 0\n");
  EXPECT_EQ(r.faults, (std::vector<FaultRun>{{1, -1, 0}, {3, 0, 2}}));
  EXPECT_EQ(r.arg_error, (std::pair<std::string, int>{"f", 1}));  // the first one
  EXPECT_EQ(r.out_of_bounds, (std::pair<std::string, int>{"workspace", 0}));
  EXPECT_EQ(r.traces.size(), 4u);
  EXPECT_EQ(r.other_lines, (std::vector<std::string>{"AOTFUZZ fault x 0 2"}));
}

TEST(ParseHarnessOutput, ReadsAWritePastAForeignHarnesssMemoryPool) {
  const ParsedRun r = parse_harness_output("AOTFUZZ run 1\nAOTFUZZ out-of-bounds pool 1\n");
  EXPECT_EQ(r.out_of_bounds, (std::pair<std::string, int>{"pool", 1}));
}

TEST(ParseHarnessOutput, ReadsClobberAndHarnessErrors) {
  const ParsedRun a = parse_harness_output("AOTFUZZ run 1\nAOTFUZZ input-clobbered 2 17\n");
  EXPECT_EQ(a.clobbered_input, (std::pair<int, std::int64_t>{2, 17}));
  const ParsedRun b = parse_harness_output("AOTFUZZ harness-error mmap\n");
  EXPECT_EQ(b.harness_error, "mmap");
}

TEST(OutputValues, ConvertsPrintedOutputsAndRefusesMissingOrMisSizedOnes) {
  const auto t = ir::TypeNode::tensor({2}, ir::DType::kInt8);
  const auto x = ir::VarNode::make("x", t);
  const auto main = ir::FunctionNode::make({x}, ir::TupleNode::make({x, x}));
  const auto ok =
      output_values(parse_harness_output("AOTFUZZ output 0 0102\nAOTFUZZ output 1 ff80\n"), main);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok[1].i8(0), -1);
  EXPECT_EQ(ok[1].i8(1), -128);
  EXPECT_THROW(output_values(parse_harness_output("AOTFUZZ output 0 0102\n"), main), HarnessError);
  EXPECT_THROW(
      output_values(parse_harness_output("AOTFUZZ output 0 01\nAOTFUZZ output 1 0102\n"), main),
      HarnessError);
}

}  // namespace
}  // namespace aotfuzz::oracle

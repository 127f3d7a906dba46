// Property tests over generated graphs: every graph the generator builds, taken through the
// passes and the C backend, compiles with tcc, runs under the harness, and agrees with the
// reference interpreter, with call arities (static and traced) equal to the IR's.
#include <gtest/gtest.h>
#include <rapidcheck.h>
#include <rapidcheck/gtest.h>

#include "aot/codegen_error.h"
#include "aot/pass_error.h"
#include "generator/builder.h"
#include "generator/policy.h"
#include "ir/traversal.h"
#include "oracle/static_arity.h"
#include "reference/c_interface.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"
#include "reference/tvm_passes.h"
#include "tests/support/codegen_run.h"
#include "tests/support/modules.h"

namespace aotfuzz::oracle {
namespace {

using aot::Options;

// The fused module of a generated graph, or nullopt when the pipeline rightly rejects the graph.
std::optional<ir::Module> fused_or_discard(const ir::Module& annotated, bool merge) {
  try {
    return test_support::fused_of(annotated, merge);
  } catch (const aot::PassError& e) {
    if (e.kind() == aot::PassError::Kind::kRejectedInput) return std::nullopt;
    throw;
  }
}

// Swarm policies over every op, tuples entering regions, duplicate outputs and unused inputs.
generator::GenPolicy policy_for(ir::Rng& rng) {
  generator::GenPolicy base;
  base.ops = {{"add", 2}, {"subtract", 1}, {"multiply", 1}};
  base.p_begin_on_tuple = 0.1;
  base.p_duplicate_output = 0.2;
  base.p_unused_input = 0.1;
  return generator::swarm(base, rng);
}

Options options_for(int combo) {
  Options o;
  o.api = combo == 0 ? Options::Api::kPacked : Options::Api::kUnpacked;
  o.interface = combo == 2 ? Options::Interface::kC : Options::Interface::kPacked;
  return o;
}

RC_GTEST_PROP(GeneratedGraphs, CompileRunAndMatchTheReferenceWithIrArities, ()) {
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  const bool merge = *rc::gen::arbitrary<bool>();
  const int combo = *rc::gen::inRange(0, 3);
  const bool reuse = *rc::gen::arbitrary<bool>();
  ir::Rng rng(seed);
  const generator::GenPolicy policy = policy_for(rng);
  const ir::Module annotated = generator::generate(policy, rng);
  const auto fused = fused_or_discard(annotated, merge);
  RC_PRE(fused.has_value());
  Options options = options_for(combo);
  options.storage_reuse = reuse;
  const auto inputs = reference::make_inputs(annotated.main(), seed);
  test_support::RunOutcome r;
  try {
    r = test_support::build_and_run(*fused, options, inputs);
  } catch (const aot::CodegenRefusal&) {
    // A policy without merge_safe may draw input names that sanitize to one C name: TVM's C
    // interface refuses them, and so must the pipeline, exactly where TVM's naming does.
    RC_ASSERT(options.interface == Options::Interface::kC);
    RC_ASSERT_THROWS_AS(reference::c_interface_input_names(fused->main()), reference::TvmRefuses);
    RC_DISCARD("the C interface rightly refuses these input names");
  }
  RC_ASSERT(r.compiled.ok());
  RC_ASSERT(r.run.exited_ok());
  RC_ASSERT(r.parsed.completed);
  RC_ASSERT(r.parsed.rcs == (std::vector<int>{0, 0}));
  RC_ASSERT(r.parsed.unwritten.empty());
  const auto expected = reference::run_main(annotated, inputs).flatten();
  const auto actual = output_values(r.parsed, fused->main());
  RC_ASSERT(actual.size() == expected.size());
  for (std::size_t i = 0; i < actual.size(); ++i) {
    const auto mismatch = reference::first_mismatch(expected[i], actual[i]);
    if (mismatch) RC_FAIL("output " + std::to_string(i) + ": " + mismatch->to_string());
  }
  const auto sites = static_arity(r.sources.file(aot::lib_file_name(options)), options.mod_name);
  RC_ASSERT(sites == r.sources.expected_arity);
  std::vector<TraceCall> packed_sites;
  for (const auto& s : r.sources.expected_arity) {
    if (s.packed) packed_sites.push_back({s.callee, s.num_args});
  }
  // Runs 1 and 2, then one fault run per distinct failed call (first, middle, last), then one
  // with the workspace allocation failing (call 0) when the executor allocates one.
  RC_ASSERT(r.parsed.traces.size() == 2u + r.parsed.faults.size());
  RC_ASSERT(r.parsed.traces[0] == packed_sites);
  RC_ASSERT(r.parsed.traces[1] == packed_sites);
  const int calls = static_cast<int>(r.sources.expected_arity.size());
  const bool allocates =
      r.sources.file(aot::lib_file_name(options)).find("TVMBackendAllocWorkspace(") !=
      std::string::npos;
  RC_ASSERT(r.parsed.faults.empty() == (calls == 0 && !allocates));
  for (std::size_t k = 0; k < r.parsed.faults.size(); ++k) {
    const FaultRun& f = r.parsed.faults[k];
    const bool allocation = allocates && k + 1 == r.parsed.faults.size();
    if (allocation) {
      RC_ASSERT(f.fail_at == 0);
    } else {
      RC_ASSERT(f.fail_at >= 1 && f.fail_at <= calls);
    }
    RC_ASSERT(f.rc != 0);
    RC_ASSERT(f.calls_after == 0);
  }
}

RC_GTEST_PROP(GeneratedGraphs, Bug9036SwitchChangesTheStaticArityExactlyWhenACallTakesATuple, ()) {
  const auto seed = *rc::gen::arbitrary<std::uint64_t>();
  ir::Rng rng(seed);
  const generator::GenPolicy policy = policy_for(rng);
  const ir::Module annotated = generator::generate(policy, rng);
  const auto fused = fused_or_discard(annotated, true);
  RC_PRE(fused.has_value());
  bool tuple_arg = false;
  for (const auto& node : ir::post_order(fused->main()->body())) {
    if (const auto* call = ir::as<ir::CallNode>(node)) {
      for (const auto& a : call->args()) tuple_arg = tuple_arg || ir::flat_count(a->type()) > 1;
    }
  }
  RC_CLASSIFY(tuple_arg);
  Options options;
  options.bugs.enable(aot::Bug::kTupleArgFirstFieldOnly);
  const auto src = aot::generate_c(*fused, options);
  const auto diffs =
      arity_differences(src.expected_arity, static_arity(src.file(aot::lib_file_name(options))));
  RC_ASSERT(diffs.empty() == !tuple_arg);
}

}  // namespace
}  // namespace aotfuzz::oracle

// Unit tests for the generation policy, its knob table, swarm testing, the decision sources, the
// builder (determinism, policy effects, reachability of the conformance shapes) and the decoder.
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <ctime>
#include <map>
#include <set>
#include <unordered_set>

#include "generator/builder.h"
#include "generator/decisions.h"
#include "generator/policy.h"
#include "generator/stats.h"
#include "ir/error.h"
#include "ir/regions.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "reference/footprint.h"
#include "tests/generator/shapes.h"

namespace aotfuzz::generator {
namespace {

using testing::has_9036_shape;
using testing::has_end_on_tuple;
using testing::has_extern_feeding_chained_host_adds;
using testing::has_host_path_inside_merge_group;
using testing::has_single_op_region;
using testing::region_graph_is_acyclic;

bool is_c_identifier_like(const std::string& name) {
  return !name.empty() && std::all_of(name.begin(), name.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_';
  });
}

ir::Module gen(const GenPolicy& policy, std::uint64_t seed) {
  ir::Rng rng(seed);
  return generate(policy, rng);
}

GenPolicy with(std::initializer_list<std::pair<const char*, const char*>> knobs,
               GenPolicy policy = {}) {
  for (const auto& [name, value] : knobs) set_knob(policy, name, value);
  return policy;
}

// Every tensor type anywhere in @main (parameters and nodes).
std::vector<ir::Type> tensor_types(const ir::Module& m) {
  std::vector<ir::Type> out;
  for (const auto& p : m.main()->params()) out.push_back(p->type());
  for (const auto& n : ir::post_order(m.main()->body())) {
    for (const auto& t : ir::flatten_tensors(n->type())) out.push_back(t);
  }
  return out;
}

std::set<std::string> op_names(const ir::Module& m) {
  std::set<std::string> out;
  for (const auto& n : ir::post_order(m.main()->body())) {
    if (const auto* call = ir::as<ir::CallNode>(n);
        call && call->op() && !ir::is_annotation(*call->op())) {
      out.insert(std::string(ir::op_name(*call->op())));
    }
  }
  return out;
}

// Nodes of kind T that lie in some region.
template <class T>
std::size_t count_in_regions(const ir::Module& m) {
  const ir::RegionSet regions = ir::RegionSet::build(m.main()->body());
  std::size_t count = 0;
  for (const auto& n : ir::post_order(m.main()->body())) {
    count += ir::as<T>(n) != nullptr && regions.region_of(n.get()) != nullptr;
  }
  return count;
}

// ---- knob table -----------------------------------------------------------------------------

TEST(GeneratorKnobs, EveryKnobHasHelpAndRoundTripsThroughGetAndSet) {
  GenPolicy policy;
  const auto names = knob_names();
  ASSERT_GE(names.size(), 30u);
  std::set<std::string> unique(names.begin(), names.end());
  EXPECT_EQ(unique.size(), names.size());
  for (const auto& name : names) {
    EXPECT_FALSE(knob_help(name).empty()) << name;
    GenPolicy copy;
    set_knob(copy, name, get_knob(policy, name));
    EXPECT_EQ(describe(copy), describe(policy)) << name;
  }
}

TEST(GeneratorKnobs, KnobNumberGivesANumberKnobExactlyAsItWasSet) {
  GenPolicy policy;
  std::size_t numbers = 0;
  for (const auto& name : knob_names()) {
    if (name == "targets" || name == "dtypes" || name == "ops") {
      EXPECT_THROW(knob_number(policy, name), ir::Error) << name;
      continue;
    }
    // A value off its default, set from text as --knob and a system's knobs set it.
    const std::string value = name.rfind("p_", 0) == 0 ? "0.1" : name == "merge_safe" ? "0" : "2";
    set_knob(policy, name, value);
    EXPECT_EQ(knob_number(policy, name), std::stod(value)) << name;
    ++numbers;
  }
  EXPECT_EQ(numbers + 3, knob_names().size());
  EXPECT_THROW(knob_number(policy, "nope"), ir::Error);
}

TEST(GeneratorKnobs, TheKnobsOfACampaignsDrawsPerCaseChangeNoGraph) {
  std::vector<std::string> per_case;
  for (const auto& name : knob_names()) {
    if (knob_use(name) == KnobUse::kCase) per_case.push_back(name);
  }
  ASSERT_GE(per_case.size(), 7u);
  EXPECT_EQ(knob_use("p_host_op"), KnobUse::kGraph);
  GenPolicy changed;
  for (const auto& name : per_case) set_knob(changed, name, name.rfind("p_", 0) == 0 ? "1" : "9");
  EXPECT_NE(describe(changed), describe(GenPolicy{}));
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_TRUE(ir::structural_equal(gen(changed, seed), gen(GenPolicy{}, seed))) << seed;
    // Nor do they change what swarm draws, nor does swarm change them.
    ir::Rng a(seed), b(seed);
    const GenPolicy swarmed = swarm(changed, a);
    EXPECT_TRUE(ir::structural_equal(generate(swarmed, a), generate(swarm(GenPolicy{}, b), b)));
    for (const auto& name : per_case) {
      EXPECT_EQ(get_knob(swarmed, name), get_knob(changed, name)) << name;
    }
  }
}

TEST(GeneratorKnobs, DescribeOfAChangedPolicyReplaysThroughSetKnob) {
  GenPolicy changed = with({{"max_ops", "77"},
                            {"p_tuple", "0.625"},
                            {"merge_safe", "false"},
                            {"targets", "ccompiler:2,dnnl_like:1.5,default:0"},
                            {"dtypes", "int8:1"},
                            {"ops", "add:1,multiply:3"}});
  const std::string text = describe(changed);
  EXPECT_NE(text, describe(GenPolicy{}));
  GenPolicy replayed;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t space = text.find(' ', pos);
    if (space == std::string::npos) space = text.size();
    const std::string item = text.substr(pos, space - pos);
    const std::size_t eq = item.find('=');
    ASSERT_NE(eq, std::string::npos) << item;
    set_knob(replayed, item.substr(0, eq), item.substr(eq + 1));
    pos = space + 1;
  }
  EXPECT_EQ(describe(replayed), text);
  EXPECT_EQ(replayed.max_ops, 77);
  EXPECT_DOUBLE_EQ(replayed.p_tuple, 0.625);
  EXPECT_FALSE(replayed.merge_safe);
  ASSERT_EQ(replayed.targets.size(), 3u);
  EXPECT_EQ(replayed.targets[1].name, "dnnl_like");
  EXPECT_DOUBLE_EQ(replayed.targets[1].weight, 1.5);
}

TEST(GeneratorKnobs, UnknownKnobIsAnErrorNamingIt) {
  GenPolicy policy;
  try {
    set_knob(policy, "p_no_such_thing", "0.5");
    FAIL() << "no error";
  } catch (const ir::Error& e) {
    EXPECT_NE(std::string(e.what()).find("p_no_such_thing"), std::string::npos);
  }
  EXPECT_THROW(knob_help("nope"), ir::Error);
  EXPECT_THROW(get_knob(policy, "nope"), ir::Error);
}

TEST(GeneratorKnobs, BadValuesAreErrorsAndLeaveThePolicyUnchanged) {
  const std::vector<std::pair<const char*, const char*>> bad = {
      {"p_tuple", "1.5"},
      {"p_tuple", "-0.1"},
      {"p_tuple", "abc"},
      {"p_tuple", "0.5x"},
      {"p_tuple", "nan"},
      {"p_tuple", ""},
      {"max_ops", "0"},
      {"max_ops", "1.5"},
      {"max_ops", "99999999999"},
      {"merge_safe", "2"},
      {"merge_safe", "yes"},
      {"dtypes", "float64:1"},
      {"ops", "annotation.compiler_begin:1"},
      {"ops", "add:-1"},
      {"targets", ""},
      {"targets", "a:0"},
      {"targets", "a:1,a:2"},
      {"targets", "a b:1"},
      {"targets", "ccompiler"},
      {"targets", "ccompiler:1,"},
      {"max_tuple_fields", "1"},
  };
  for (const auto& [name, value] : bad) {
    GenPolicy policy;
    const std::string before = describe(policy);
    try {
      set_knob(policy, name, value);
      ADD_FAILURE() << name << "=" << value << " was accepted";
    } catch (const ir::Error& e) {
      EXPECT_NE(std::string(e.what()).find(name), std::string::npos) << e.what();
    }
    EXPECT_EQ(describe(policy), before) << name << "=" << value;
  }
}

TEST(GeneratorKnobs, ValidateRejectsInvertedRangesAndGenerateChecksIt) {
  GenPolicy policy = with({{"min_ops", "9"}, {"max_ops", "3"}});
  EXPECT_THROW(validate(policy), ir::Error);
  ir::Rng rng(1);
  EXPECT_THROW(generate(policy, rng), ir::Error);
  EXPECT_THROW(decode(policy, nullptr, 0), ir::Error);
  GenPolicy no_targets;
  no_targets.targets = {{"ccompiler", 0}};
  EXPECT_THROW(validate(no_targets), ir::Error);
  EXPECT_NO_THROW(validate(GenPolicy{}));
  EXPECT_THROW(with_size(GenPolicy{}, 0), ir::Error);
}

// ---- swarm ----------------------------------------------------------------------------------

TEST(Swarm, OnlySwitchesFeaturesOffAndKeepsOneEntryPerList) {
  const GenPolicy base = with(
      {{"targets", "ccompiler:3,dnnl_like:2,default:1"}, {"ops", "add:1,subtract:1,multiply:0"}});
  std::map<std::string, std::set<std::string>> seen_values;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    ir::Rng rng(seed);
    const GenPolicy p = swarm(base, rng);
    EXPECT_NO_THROW(validate(p));
    for (const auto& name : knob_names()) {
      const std::string value = get_knob(p, name);
      seen_values[name].insert(value);
      if (name.rfind("p_", 0) == 0 && value != get_knob(base, name)) {
        EXPECT_EQ(value, "0") << name;
      }
    }
    for (const auto* list : {&p.targets, &p.dtypes, &p.ops}) {
      bool positive = false;
      for (const auto& e : *list) positive = positive || e.weight > 0;
      EXPECT_TRUE(positive);
    }
    const WeightList* bases[] = {&base.targets, &base.dtypes, &base.ops};
    const WeightList* lists[] = {&p.targets, &p.dtypes, &p.ops};
    for (int l = 0; l < 3; ++l) {
      ASSERT_EQ(lists[l]->size(), bases[l]->size());
      for (std::size_t i = 0; i < lists[l]->size(); ++i) {
        const double w = (*lists[l])[i].weight;
        EXPECT_TRUE(w == 0 || w == (*bases[l])[i].weight);
      }
    }
    EXPECT_EQ(p.max_ops, base.max_ops);
    EXPECT_EQ(p.ops[2].weight, 0);  // off in the base stays off
  }
  // Each swarm feature is seen both on and off.
  for (const char* name :
       {"p_host_op", "p_tuple", "p_multi_end", "p_broadcast", "targets", "ops"}) {
    EXPECT_GE(seen_values[name].size(), 2u) << name;
  }
  EXPECT_EQ(seen_values["p_new_region"].size(), 1u);  // not a swarm feature
}

// The set of targets of positive weight.
std::set<std::string> kept_targets(const GenPolicy& p) {
  std::set<std::string> out;
  for (const auto& t : p.targets) {
    if (t.weight > 0) out.insert(t.name);
  }
  return out;
}

TEST(Swarm, KeepsACompiledTargetWhenTheBaseHasOne) {
  // The default targets: `default` alone would leave every region to the host.
  std::map<std::set<std::string>, int> seen;
  for (std::uint64_t seed = 0; seed < 400; ++seed) {
    ir::Rng rng(seed);
    const std::set<std::string> kept = kept_targets(swarm(GenPolicy{}, rng));
    EXPECT_TRUE(kept.count("ccompiler")) << seed;
    ++seen[kept];
  }
  ASSERT_EQ(seen.size(), 2u);
  // Each of ccompiler and default is kept with probability 1/2, ccompiler back when it was not:
  // half the policies mix the two targets.
  const int mixed = seen[{"ccompiler", "default"}];
  EXPECT_GT(mixed, 150);
  EXPECT_LT(mixed, 250);

  // Two compiled targets: either may go, never both.
  const GenPolicy two = with({{"targets", "ccompiler:1,dnnl_like:1,default:1"}});
  std::set<std::set<std::string>> combos;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    ir::Rng rng(seed);
    const std::set<std::string> kept = kept_targets(swarm(two, rng));
    EXPECT_TRUE(kept.count("ccompiler") || kept.count("dnnl_like")) << seed;
    combos.insert(kept);
  }
  EXPECT_TRUE(combos.count({"ccompiler"}));
  EXPECT_TRUE(combos.count({"dnnl_like", "default"}));

  // A base with only `default` keeps it.
  ir::Rng rng(1);
  EXPECT_EQ(kept_targets(swarm(with({{"targets", "default:1"}}), rng)),
            (std::set<std::string>{"default"}));
}

// ---- decision sources -----------------------------------------------------------------------

TEST(DecisionSources, ExhaustedBytesGiveTheSmallestChoices) {
  ByteDecisions d(nullptr, 0);
  EXPECT_TRUE(d.exhausted());
  EXPECT_EQ(d.below(10), 0u);
  EXPECT_FALSE(d.chance(0.99));
  EXPECT_TRUE(d.chance(1.0));
  EXPECT_EQ(d.weighted({0, 2, 1}), 1u);
  EXPECT_EQ(d.range(3, 9), 3);
}

TEST(DecisionSources, BytesAreReadFrontToBack) {
  const std::uint8_t data[] = {7, 255, 0, 1, 0x80, 0x00};
  ByteDecisions d(data, sizeof data);
  EXPECT_EQ(d.below(10), 7u);
  EXPECT_FALSE(d.chance(0.5));             // 255 is near 1
  EXPECT_TRUE(d.chance(0.5));              // 0 is near 0
  EXPECT_EQ(d.below(300), 0x8001u % 300);  // two bytes, little-endian
  EXPECT_EQ(d.consumed(), 5u);
  EXPECT_FALSE(d.exhausted());
  EXPECT_EQ(d.weighted({1, 1}), 0u);  // 0x0000: the first half; reads past the end as 0
  EXPECT_TRUE(d.exhausted());
}

TEST(DecisionSources, WeightedChoicesNeverPickAZeroWeight) {
  ir::Rng rng(5);
  RngDecisions r(rng);
  std::vector<std::uint8_t> bytes(4000);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next());
  ByteDecisions d(bytes.data(), bytes.size());
  std::set<std::size_t> seen;
  for (int i = 0; i < 1000; ++i) {
    const std::size_t a = r.weighted({0, 1, 0, 3, 0});
    const std::size_t b = d.weighted({0, 1, 0, 3, 0});
    EXPECT_TRUE(a == 1 || a == 3);
    EXPECT_TRUE(b == 1 || b == 3);
    seen.insert(a);
  }
  EXPECT_EQ(seen.size(), 2u);
}

// ---- builder --------------------------------------------------------------------------------

TEST(GraphBuilder, TheSameSeedGivesTheSameModule) {
  const GenPolicy policy = with({{"max_ops", "40"}});
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Module a = gen(policy, seed);
    const ir::Module b = gen(policy, seed);
    EXPECT_TRUE(ir::structural_equal(a, b)) << seed;
    EXPECT_EQ(ir::structural_hash(a), ir::structural_hash(b)) << seed;
  }
}

TEST(GraphBuilder, DifferentSeedsMostlyGiveDifferentModules) {
  std::unordered_set<std::size_t> hashes;
  for (std::uint64_t seed = 0; seed < 300; ++seed)
    hashes.insert(ir::structural_hash(gen({}, seed)));
  EXPECT_GE(hashes.size(), 270u);
}

TEST(GraphBuilder, DefaultPolicyModulesVerifyAndKeepRegionsOutlinable) {
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    const ir::Module m = gen({}, seed);
    ASSERT_NO_THROW(ir::verify(m)) << seed;
    EXPECT_TRUE(region_graph_is_acyclic(m)) << seed;
    EXPECT_FALSE(has_host_path_inside_merge_group(m)) << seed;
  }
}

TEST(GraphBuilder, SizeSetsTheNumberOfSteps) {
  // Tuples of constants are not steps: they come with constant operands, off here.
  const GenPolicy plain = with_size(
      with({{"p_tuple", "0"}, {"p_tuple_get_item", "0"}, {"p_constant", "0"}}), 37);
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const GraphStats s = graph_stats(gen(plain, seed));
    EXPECT_EQ(s.ops, 37u) << seed;
    EXPECT_EQ(s.tuple_get_items, 0u);
    EXPECT_LE(s.tuples, 1u);  // at most @main's result tuple
  }
  const GenPolicy tuples = with_size(
      with({{"p_tuple", "0.3"}, {"p_tuple_get_item", "0.3"}, {"p_constant", "0"}}), 25);
  for (std::uint64_t seed = 0; seed < 30; ++seed) {
    const GraphStats s = graph_stats(gen(tuples, seed));
    const std::size_t steps = s.ops + s.tuples + s.tuple_get_items;
    EXPECT_GE(steps, 25u) << seed;
    EXPECT_LE(steps, 27u) << seed;  // plus @main's result tuple and an empty tuple () in it
  }
}

TEST(GraphBuilder, EveryOpReachesTheResult) {
  // Nothing a step makes can be dead: the values nobody uses become outputs. So the number of
  // steps in the graph equals the number asked for, even with outputs gathered in a tuple.
  const GenPolicy policy =
      with_size(with({{"p_tuple", "0"}, {"p_tuple_get_item", "0"}, {"p_prefer_unused", "0"}}), 20);
  for (std::uint64_t seed = 0; seed < 50; ++seed)
    EXPECT_EQ(graph_stats(gen(policy, seed)).ops, 20u);
}

TEST(GraphBuilder, TargetsDtypesAndOpsFollowThePolicy) {
  const GenPolicy policy = with({{"targets", "dnnl_like:1,my-target:1"},
                                 {"dtypes", "int8:1"},
                                 {"ops", "multiply:1,subtract:1"},
                                 {"max_ops", "30"}});
  std::set<std::string> targets;
  std::set<std::string> ops;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Module m = gen(policy, seed);
    ASSERT_NO_THROW(ir::verify(m));
    for (const auto& t : graph_stats(m).targets) targets.insert(t);
    for (const auto& o : op_names(m)) ops.insert(o);
    for (const auto& t : tensor_types(m)) EXPECT_EQ(t->dtype(), ir::DType::kInt8);
  }
  EXPECT_EQ(targets, (std::set<std::string>{"dnnl_like", "my-target"}));
  EXPECT_EQ(ops, (std::set<std::string>{"multiply", "subtract"}));
}

TEST(GraphBuilder, ShapesRespectRankAndDimLimitsAndBroadcastOnlyWhenAllowed) {
  const GenPolicy flat = with({{"p_broadcast", "0"},
                               {"p_scalar_constant", "0"},
                               {"min_rank", "2"},
                               {"max_rank", "2"},
                               {"min_dim", "3"},
                               {"max_dim", "5"},
                               {"max_ops", "30"}});
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const auto types = tensor_types(gen(flat, seed));
    for (const auto& t : types) {
      EXPECT_EQ(t->shape(), types.front()->shape());
      ASSERT_EQ(t->shape().size(), 2u);
      for (auto d : t->shape()) {
        EXPECT_GE(d, 3);
        EXPECT_LE(d, 5);
      }
    }
  }
  const GenPolicy broadcast = with({{"p_broadcast", "1"}, {"min_dim", "2"}, {"max_ops", "30"}});
  int graphs_with_several_shapes = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    std::set<std::vector<std::int64_t>> shapes;
    for (const auto& t : tensor_types(gen(broadcast, seed))) shapes.insert(t->shape());
    graphs_with_several_shapes += shapes.size() > 1;
  }
  EXPECT_GE(graphs_with_several_shapes, 50);
}

TEST(GraphBuilder, LargeDimensionsAreHalvedUntilATensorFitsMaxTensorElements) {
  const GenPolicy huge = with({{"min_rank", "3"},
                               {"max_rank", "3"},
                               {"min_dim", "1024"},
                               {"max_dim", "1024"},
                               {"max_tensor_elements", "100000"},
                               {"p_scalar_constant", "0"}});
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    const ir::Module m = gen(huge, seed);
    for (const auto& t : tensor_types(m)) {
      EXPECT_LE(t->num_elements(), 100000) << ir::type_to_string(t);
      EXPECT_EQ(t->shape().size(), 3u);
    }
    EXPECT_LE(reference::tensor_bytes_needed(m), reference::kDefaultMemoryBudget);
  }
  // Shapes that fit are the ones drawn: the default policy's graphs do not change with the knob.
  for (std::uint64_t seed = 0; seed < 20; ++seed) {
    EXPECT_TRUE(
        ir::structural_equal(gen({}, seed), gen(with({{"max_tensor_elements", "1000"}}), seed)));
  }
}

TEST(GraphBuilder, PlacementKnobsDecideWhereOpsGo) {
  // No host ops: outside regions there are only @main's result tuple and TupleGetItems reading
  // tuples that nothing else could read (host tuples, tuples ended by closed regions).
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Module m = gen(with({{"p_host_op", "0"}, {"max_ops", "30"}}), seed);
    const ir::Expr& body = m.main()->body();
    const ir::RegionSet regions = ir::RegionSet::build(body);
    std::size_t empty_results = 0;  // p_empty_tuple_output's () among @main's results
    for (const auto& n : ir::post_order(body)) {
      if (regions.region_of(n.get()) != nullptr || n == body) continue;
      const auto* call = ir::as<ir::CallNode>(n);
      EXPECT_FALSE(call && call->op() && ir::is_elementwise(*call->op())) << seed;
      const auto* tuple = ir::as<ir::TupleNode>(n);
      if (tuple && tuple->fields().empty() && body->kind() == ir::ExprKind::kTuple) {
        ++empty_results;
        continue;
      }
      // A tuple of constants on its way into a region (bound there, not a host value).
      if (tuple && std::all_of(tuple->fields().begin(), tuple->fields().end(),
                               [](const ir::Expr& f) { return ir::as<ir::ConstantNode>(f); })) {
        continue;
      }
      EXPECT_FALSE(tuple) << seed;
    }
    EXPECT_EQ(
        graph_stats(m).host_ops,
        graph_stats(m).tuple_get_items - count_in_regions<ir::TupleGetItemNode>(m) +
            (body->kind() == ir::ExprKind::kTuple && regions.region_of(body.get()) == nullptr) +
            empty_results);
  }
  // All host ops: no regions at all.
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const GraphStats s = graph_stats(gen(with({{"p_host_op", "1"}}), seed));
    EXPECT_EQ(s.regions, 0u);
    EXPECT_EQ(s.begins + s.ends, 0u);
  }
}

TEST(GraphBuilder, OutputKnobsShapeTheResultOfMain) {
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Module m = gen(with({{"p_duplicate_output", "1"}}), seed);
    EXPECT_TRUE(graph_stats(m).duplicate_outputs) << seed;
    const ir::Module t = gen(with({{"p_tuple_output", "1"}}), seed);
    EXPECT_TRUE(t.main()->body()->type()->is_tuple()) << seed;
  }
}

TEST(GraphBuilder, MultiEndKnobControlsSeveralEndsOnOneValue) {
  int with_multi = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    EXPECT_EQ(
        graph_stats(gen(with({{"p_multi_end", "0"}, {"max_ops", "30"}}), seed)).multi_end_values,
        0u);
    with_multi +=
        graph_stats(gen(with({{"p_multi_end", "1"}, {"max_ops", "30"}}), seed)).multi_end_values >
        0;
  }
  EXPECT_GE(with_multi, 50);
}

TEST(GraphBuilder, MultiOutputKnobMakesRegionsWithSeveralOutputsFeedingOneConsumer) {
  const GenPolicy base = with({{"p_tuple", "0"}});
  int multi_off = 0, multi_on = 0, shape_off = 0, shape_on = 0;
  for (std::uint64_t seed = 0; seed < 1000; ++seed) {
    const ir::Module off = gen(with({{"p_multi_output", "0"}}, base), seed);
    const ir::Module on = gen(with({{"p_multi_output", "1"}}, base), seed);
    multi_off += graph_stats(off).multi_output_regions > 0;
    multi_on += graph_stats(on).multi_output_regions > 0;
    shape_off += has_9036_shape(off);
    shape_on += has_9036_shape(on);
  }
  EXPECT_GT(multi_on, multi_off + 100);
  EXPECT_GT(shape_on, 2 * shape_off);
}

TEST(GraphBuilder, TupleDepthStaysWithinTheLimit) {
  const GenPolicy policy = with(
      {{"p_tuple", "0.5"}, {"p_nested_tuple", "1"}, {"max_tuple_depth", "2"}, {"max_ops", "60"}});
  int nested = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Module m = gen(policy, seed);
    for (const auto& n : ir::post_order(m.main()->body())) {
      if (n == m.main()->body()) continue;  // @main's result may gather tuples
      EXPECT_LE(n->type()->depth(), 2);
      nested += n->type()->depth() == 2;
    }
  }
  EXPECT_GT(nested, 0);
}

TEST(GraphBuilder, TuplesMayEnterRegionsOnlyWhenAllowed) {
  auto tuple_begins = [](const ir::Module& m) {
    int count = 0;
    for (const auto& n : ir::post_order(m.main()->body())) {
      const auto* call = ir::as<ir::CallNode>(n);
      if (!call || !call->is_op(ir::Op::kCompilerBegin) || !n->type()->is_tuple()) continue;
      // A tuple of constants is bound into the region's function, never its parameter.
      const auto* tuple = ir::as<ir::TupleNode>(call->args()[0]);
      const bool constant = tuple && std::all_of(tuple->fields().begin(), tuple->fields().end(),
                                                 [](const ir::Expr& f) {
                                                   return ir::as<ir::ConstantNode>(f) != nullptr;
                                                 });
      count += !constant;
    }
    return count;
  };
  const GenPolicy off = with({{"p_tuple", "0.4"}, {"max_ops", "30"}});
  const GenPolicy on = with({{"p_tuple", "0.4"}, {"p_begin_on_tuple", "1"}, {"max_ops", "30"}});
  int seen = 0;
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    EXPECT_EQ(tuple_begins(gen(off, seed)), 0);
    const ir::Module m = gen(on, seed);
    EXPECT_NO_THROW(ir::verify(m));
    seen += tuple_begins(m);
  }
  EXPECT_GT(seen, 0);
}

TEST(GraphBuilder, ConstantsEnterRegionsAloneOrInConstantTuplesAndStayOnTheHostOnlyWithTheKnob) {
  struct Seen {
    int host = 0;     // a constant read by a host op
    int begin = 0;    // compiler_begin(constant)
    int tuple = 0;    // compiler_begin((constant, constant))
    int scalar = 0;   // a rank-0 constant
  };
  auto count = [](const ir::Module& m, Seen& seen) {
    for (const auto& n : ir::post_order(m.main()->body())) {
      const auto* call = ir::as<ir::CallNode>(n);
      if (const auto* c = ir::as<ir::ConstantNode>(n)) seen.scalar += c->is_scalar();
      if (!call || !call->op()) continue;
      for (const auto& a : call->args()) {
        if (ir::as<ir::ConstantNode>(a) == nullptr && ir::as<ir::TupleNode>(a) == nullptr) continue;
        if (call->is_op(ir::Op::kCompilerBegin)) {
          (ir::as<ir::TupleNode>(a) ? seen.tuple : seen.begin) += 1;
        } else if (!ir::is_annotation(*call->op()) && ir::as<ir::ConstantNode>(a)) {
          ++seen.host;
        }
      }
    }
  };
  Seen on;
  Seen off;
  const GenPolicy none = with({{"p_constant", "0"}, {"max_ops", "20"}});
  const GenPolicy many = with({{"p_constant", "0.5"}, {"max_ops", "20"}});
  for (std::uint64_t seed = 0; seed < 100; ++seed) {
    const ir::Module m = gen(many, seed);
    EXPECT_NO_THROW(ir::verify(m));
    count(m, on);
    count(gen(none, seed), off);
  }
  EXPECT_GT(on.host, 0);
  EXPECT_GT(on.begin, 0);
  EXPECT_GT(on.tuple, 0);
  EXPECT_GT(on.scalar, 0);
  EXPECT_EQ(off.host + off.begin + off.tuple + off.scalar, 0);
}

TEST(GraphBuilder, MergeSafetyCanBeSwitchedOffToReachTheCyclicMergeCase) {
  const GenPolicy unsafe =
      with({{"merge_safe", "0"}, {"targets", "ccompiler:1"}, {"max_ops", "12"}});
  const GenPolicy safe = with({{"targets", "ccompiler:1"}, {"max_ops", "12"}});
  int risky = 0;
  for (std::uint64_t seed = 0; seed < 2000; ++seed) {
    const ir::Module m = gen(unsafe, seed);
    ASSERT_NO_THROW(ir::verify(m));
    risky += has_host_path_inside_merge_group(m);
    EXPECT_FALSE(has_host_path_inside_merge_group(gen(safe, seed))) << seed;
  }
  EXPECT_GT(risky, 0);
}

TEST(GraphBuilder, MergeSafeGraphsHaveNoCycleThroughTheHostAcrossTwoMergedRegions) {
  // Found by `aotfuzz fuzz --time 600 --seed 12` (case 147974): one region's output reached
  // another merge group through a host tuple while that group reached the first through a host
  // add, so the two merged regions needed each other. Each group alone was merge-safe.
  const std::uint64_t seed = 15980150993432561755ULL;
  ir::Rng rng(seed);
  const GenPolicy policy = swarm(GenPolicy{}, rng);
  ASSERT_TRUE(policy.merge_safe);
  const ir::Module m = generate(policy, rng);
  EXPECT_TRUE(testing::partitions_after_merging(m));
  // The same over many one-target graphs of up to 60 steps (4 of these 3000 seeds failed
  // before merge safety considered cycles through several groups).
  const GenPolicy one_target = with({{"targets", "ccompiler:1"}, {"max_ops", "60"}});
  for (std::uint64_t s = 0; s < 3000; ++s) {
    EXPECT_TRUE(testing::partitions_after_merging(gen(one_target, s))) << s;
  }
}

TEST(GraphBuilder, OddInputNamesAreOneCFieldEachUnlessMergeSafetyIsOff) {
  const GenPolicy safe = with({{"p_odd_name", "1"}, {"max_inputs", "6"}, {"max_ops", "16"}});
  GenPolicy unsafe = safe;
  unsafe.merge_safe = false;
  int odd = 0, clashes = 0;
  for (std::uint64_t seed = 0; seed < 300; ++seed) {
    const ir::Module m = gen(safe, seed);
    for (const auto& p : m.main()->params()) odd += !is_c_identifier_like(p->name());
    EXPECT_FALSE(testing::c_interface_refuses_input_names(m)) << seed;
    const ir::Module u = gen(unsafe, seed);
    ASSERT_NO_THROW(ir::verify(u));
    clashes += testing::c_interface_refuses_input_names(u);
  }
  EXPECT_GT(odd, 300);
  EXPECT_GT(clashes, 0);
  // The default policy names inputs x<k> mostly.
  int plain = 0, all = 0;
  for (std::uint64_t seed = 0; seed < 200; ++seed) {
    const ir::Module m = gen(GenPolicy{}, seed);
    for (const auto& p : m.main()->params()) {
      plain += is_c_identifier_like(p->name());
      ++all;
    }
  }
  EXPECT_GT(plain, all / 2);
  EXPECT_LT(plain, all);
}

TEST(GraphBuilder, ATenThousandStepGraphGeneratesQuicklyAndVerifies) {
  // CPU time, so a loaded machine does not fail the test; generous enough for sanitizer builds.
  const std::clock_t start = std::clock();
  const ir::Module m = gen(with_size(GenPolicy{}, 10'000), 42);
  const double ms = 1000.0 * static_cast<double>(std::clock() - start) / CLOCKS_PER_SEC;
  EXPECT_NO_THROW(ir::verify(m));
  const GraphStats s = graph_stats(m);
  EXPECT_GE(s.ops + s.tuples + s.tuple_get_items, 10'000u);
  EXPECT_LT(ms, 5000.0);
  std::printf("10,000 steps: %.1f ms CPU, %zu regions, %zu outputs\n", ms, s.regions, s.outputs);
}

// ---- the conformance shapes are reachable -----------------------------------------------------

// The first seed below `limit` whose module satisfies `pred`, or -1.
template <class Pred>
long first_seed(const GenPolicy& policy, Pred pred, std::uint64_t limit = 2000) {
  for (std::uint64_t seed = 0; seed < limit; ++seed) {
    if (pred(gen(policy, seed))) return static_cast<long>(seed);
  }
  return -1;
}

const GenPolicy kSmall = with({{"max_ops", "5"}});

TEST(ConformanceShapes, The9036ShapeAppears) {
  EXPECT_GE(first_seed(kSmall, has_9036_shape), 0);
  EXPECT_GE(first_seed(GenPolicy{}, has_9036_shape), 0);
}

TEST(ConformanceShapes, AnEndOnATupleAppears) {
  EXPECT_GE(first_seed(kSmall, has_end_on_tuple), 0);
  EXPECT_GE(first_seed(GenPolicy{}, has_end_on_tuple), 0);
}

TEST(ConformanceShapes, AnExternalRegionFeedingTwoChainedHostAddsAppears) {
  EXPECT_GE(first_seed(kSmall, has_extern_feeding_chained_host_adds), 0);
  EXPECT_GE(first_seed(GenPolicy{}, has_extern_feeding_chained_host_adds), 0);
}

TEST(ConformanceShapes, ASingleOpRegionAppears) {
  EXPECT_GE(first_seed(kSmall, has_single_op_region), 0);
}

TEST(ConformanceShapes, ShapePredicatesRecogniseTheHandWrittenConformanceGraphs) {
  auto f32 = ir::TypeNode::tensor({10, 10}, ir::DType::kFloat32);
  const std::string cc = "ccompiler";
  auto x = ir::VarNode::make("x", f32);
  auto w0 = ir::VarNode::make("w0", f32);
  auto w1 = ir::VarNode::make("w1", f32);
  ir::Expr z0 = ir::compiler_end(
      ir::CallNode::make(ir::Op::kAdd, {ir::compiler_begin(x, cc), ir::compiler_begin(w0, cc)}),
      cc);
  ir::Expr z1 = ir::compiler_end(
      ir::CallNode::make(ir::Op::kAdd, {ir::compiler_begin(z0, cc), ir::compiler_begin(w1, cc)}),
      cc);
  ir::Module seed;
  seed.add("main", ir::FunctionNode::make({x, w0, w1}, ir::CallNode::make(ir::Op::kAdd, {z0, z1})));
  EXPECT_TRUE(has_9036_shape(seed));
  EXPECT_FALSE(has_end_on_tuple(seed));
  EXPECT_FALSE(has_extern_feeding_chained_host_adds(seed));
  EXPECT_TRUE(has_single_op_region(seed));
  EXPECT_TRUE(region_graph_is_acyclic(seed));
  EXPECT_FALSE(has_host_path_inside_merge_group(seed));
  const GraphStats s = graph_stats(seed);
  EXPECT_EQ(s.regions, 2u);
  EXPECT_EQ(s.multi_output_regions, 0u);
  EXPECT_EQ(s.host_ops, 1u);
  EXPECT_EQ(s.host_ops_between_regions, 0u);

  auto a = ir::VarNode::make("a", f32);
  auto b = ir::VarNode::make("b", f32);
  ir::Expr ba = ir::compiler_begin(a, cc);
  ir::Expr e =
      ir::compiler_end(ir::CallNode::make(ir::Op::kAdd, {ba, ir::compiler_begin(b, cc)}), cc);
  ir::Module chained;
  chained.add(
      "main",
      ir::FunctionNode::make(
          {a, b}, ir::CallNode::make(ir::Op::kAdd, {ir::CallNode::make(ir::Op::kAdd, {e, e}), e})));
  EXPECT_TRUE(has_extern_feeding_chained_host_adds(chained));
  EXPECT_FALSE(has_9036_shape(chained));
  EXPECT_EQ(graph_stats(chained).host_ops, 2u);

  ir::Expr pair = ir::TupleNode::make(
      {ir::CallNode::make(ir::Op::kAdd, {ba, ba}), ir::CallNode::make(ir::Op::kAdd, {ba, ba})});
  ir::Module tuple_end;
  tuple_end.add("main", ir::FunctionNode::make({a}, ir::compiler_end(pair, cc)));
  EXPECT_TRUE(has_end_on_tuple(tuple_end));
  EXPECT_FALSE(has_single_op_region(tuple_end));
  EXPECT_EQ(graph_stats(tuple_end).multi_output_regions, 1u);

  // A -> host add -> B and A -> B: the cyclic-merge case; plus a host op between regions.
  ir::Expr ea = ir::compiler_end(
      ir::CallNode::make(ir::Op::kAdd, {ir::compiler_begin(a, cc), ir::compiler_begin(a, cc)}), cc);
  ir::Expr host = ir::CallNode::make(ir::Op::kAdd, {ea, ea});
  ir::Expr eb = ir::compiler_end(
      ir::CallNode::make(ir::Op::kAdd, {ir::compiler_begin(ea, cc), ir::compiler_begin(host, cc)}),
      cc);
  ir::Module cyclic;
  cyclic.add("main", ir::FunctionNode::make({a}, eb));
  EXPECT_TRUE(has_host_path_inside_merge_group(cyclic));
  EXPECT_TRUE(region_graph_is_acyclic(cyclic));
  EXPECT_EQ(graph_stats(cyclic).host_ops_between_regions, 1u);
}

// ---- the byte decoder -----------------------------------------------------------------------

TEST(ByteDecoder, EmptyInputGivesASmallValidGraph) {
  const ir::Module m = decode(GenPolicy{}, nullptr, 0);
  EXPECT_NO_THROW(ir::verify(m));
  const GraphStats s = graph_stats(m);
  EXPECT_EQ(s.ops + s.tuples + s.tuple_get_items, 1u);
}

TEST(ByteDecoder, RandomByteStringsGiveValidGraphsDeterministically) {
  ir::Rng rng(99);
  for (int i = 0; i < 1000; ++i) {
    std::vector<std::uint8_t> bytes(rng.below(300));
    for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next());
    const ir::Module m = decode(GenPolicy{}, bytes.data(), bytes.size());
    ASSERT_NO_THROW(ir::verify(m)) << i;
    EXPECT_TRUE(region_graph_is_acyclic(m));
    EXPECT_TRUE(ir::structural_equal(m, decode(GenPolicy{}, bytes.data(), bytes.size())));
    // Every step reads at least one byte (the host-or-region choice), so the graph stays small.
    const GraphStats s = graph_stats(m);
    EXPECT_LE(s.ops + s.tuples + s.tuple_get_items, bytes.size() + 2) << i;
  }
}

TEST(ByteDecoder, LongInputsAreNotCutShort) {
  ir::Rng rng(3);
  std::vector<std::uint8_t> bytes(4096);
  for (auto& b : bytes) b = static_cast<std::uint8_t>(rng.next());
  const GenPolicy policy = with_size(GenPolicy{}, 30);
  const GraphStats s = graph_stats(decode(policy, bytes.data(), bytes.size()));
  EXPECT_GE(s.ops + s.tuples + s.tuple_get_items, 30u);
  EXPECT_LE(s.ops + s.tuples + s.tuple_get_items, 31u);
}

}  // namespace
}  // namespace aotfuzz::generator

// The knob table (one row per GenPolicy field), knob text syntax, validation and swarm testing.
#include "generator/policy.h"

#include <charconv>
#include <cmath>
#include <limits>
#include <optional>
#include <variant>

#include "generator/decisions.h"
#include "ir/error.h"
#include "ir/expr.h"
#include "ir/type.h"

namespace aotfuzz::generator {
namespace {

enum class ListKind { kNone, kTarget, kDtype, kOp };

using Member =
    std::variant<int GenPolicy::*, double GenPolicy::*, bool GenPolicy::*, WeightList GenPolicy::*>;

// One knob. `lo`/`hi` bound integers and probabilities; `swarm` marks a feature that swarm
// testing switches on and off.
struct Knob {
  std::string_view name;
  Member member;
  double lo;
  double hi;
  bool swarm;
  ListKind list;
  std::string_view help;
  KnobUse use = KnobUse::kGraph;
};

constexpr double kP = 1.0;  // probabilities lie in [0, kP]
// The target PartitionGraph strips: its regions stay on the host.
constexpr std::string_view kHostTarget = "default";
constexpr double kMaxOps = 10'000'000;

const std::vector<Knob>& table() {
  // clang-format off
  static const std::vector<Knob> kTable = {
    {"min_ops", &GenPolicy::min_ops, 1, kMaxOps, false, ListKind::kNone,
     "fewest builder steps (ops, tuples, TupleGetItems) per graph"},
    {"max_ops", &GenPolicy::max_ops, 1, kMaxOps, false, ListKind::kNone,
     "most builder steps per graph"},
    {"max_inputs", &GenPolicy::max_inputs, 1, 1'000'000, false, ListKind::kNone,
     "most parameters of @main"},
    {"min_rank", &GenPolicy::min_rank, 0, 8, false, ListKind::kNone,
     "smallest rank of the per-graph shape"},
    {"max_rank", &GenPolicy::max_rank, 0, 8, false, ListKind::kNone,
     "largest rank of the per-graph shape"},
    {"min_dim", &GenPolicy::min_dim, 1, 1024, false, ListKind::kNone,
     "smallest dimension"},
    {"max_dim", &GenPolicy::max_dim, 1, 1024, false, ListKind::kNone,
     "largest dimension"},
    {"max_tensor_elements", &GenPolicy::max_tensor_elements, 1, 1 << 22, false, ListKind::kNone,
     "most elements of a tensor (larger shapes are halved until they fit)"},
    {"max_tuple_fields", &GenPolicy::max_tuple_fields, 2, 64, false, ListKind::kNone,
     "most fields of a built tuple (at least 2)"},
    {"max_tuple_depth", &GenPolicy::max_tuple_depth, 1, 32, false, ListKind::kNone,
     "deepest tuple nesting (1: tuples of tensors only)"},
    {"targets", &GenPolicy::targets, 0, 0, true, ListKind::kTarget,
     "region targets name:weight,... ('default' is left to the host)"},
    {"dtypes", &GenPolicy::dtypes, 0, 0, true, ListKind::kDtype,
     "element types name:weight,... (float32, int32, int8)"},
    {"ops", &GenPolicy::ops, 0, 0, true, ListKind::kOp,
     "elementwise ops name:weight,... (add, subtract, multiply)"},
    {"p_host_op", &GenPolicy::p_host_op, 0, kP, true, ListKind::kNone,
     "an op is placed on the host, between regions"},
    {"p_new_region", &GenPolicy::p_new_region, 0, kP, false, ListKind::kNone,
     "a region op starts a new region instead of growing an open one"},
    {"p_region_join", &GenPolicy::p_region_join, 0, kP, true, ListKind::kNone,
     "a region op takes a value of another open same-target region directly (joining them)"},
    {"p_multi_output", &GenPolicy::p_multi_output, 0, kP, true, ListKind::kNone,
     "the operand after one that left a region leaves the same merge group: multi-output"},
    {"p_multi_end", &GenPolicy::p_multi_end, 0, kP, true, ListKind::kNone,
     "a further outside use of a region value gets its own compiler_end"},
    {"p_tuple", &GenPolicy::p_tuple, 0, kP, true, ListKind::kNone,
     "a step builds a tuple"},
    {"p_nested_tuple", &GenPolicy::p_nested_tuple, 0, kP, true, ListKind::kNone,
     "a tuple field is a tuple"},
    {"p_tuple_get_item", &GenPolicy::p_tuple_get_item, 0, kP, true, ListKind::kNone,
     "a step takes a tuple field (TupleGetItem)"},
    {"p_begin_on_tuple", &GenPolicy::p_begin_on_tuple, 0, kP, true, ListKind::kNone,
     "a tuple value may enter a region through compiler_begin"},
    {"p_prefer_unused", &GenPolicy::p_prefer_unused, 0, kP, false, ListKind::kNone,
     "an operand is a value nobody uses yet (keeps @main's outputs few)"},
    {"p_input_operand", &GenPolicy::p_input_operand, 0, kP, false, ListKind::kNone,
     "an operand not from that frontier is a parameter of @main"},
    {"p_constant", &GenPolicy::p_constant, 0, kP, true, ListKind::kNone,
     "a parameter operand is a constant tensor instead (bound into regions it enters)"},
    {"p_constant_tuple", &GenPolicy::p_constant_tuple, 0, kP, true, ListKind::kNone,
     "a constant entering a region comes as a field of a tuple of constants"},
    {"p_scalar_constant", &GenPolicy::p_scalar_constant, 0, kP, true, ListKind::kNone,
     "a constant is a scalar, whatever min_rank (fused into kernels when float32 or int32)"},
    {"p_shared_input", &GenPolicy::p_shared_input, 0, kP, true, ListKind::kNone,
     "a parameter operand reuses an existing parameter"},
    {"p_local_operand", &GenPolicy::p_local_operand, 0, kP, false, ListKind::kNone,
     "an operand comes from the op's own region (or the host)"},
    {"p_repeat_operand", &GenPolicy::p_repeat_operand, 0, kP, true, ListKind::kNone,
     "both operands of a binary op are the same value"},
    {"p_shared_begin", &GenPolicy::p_shared_begin, 0, kP, true, ListKind::kNone,
     "a second use of a value in one region shares its compiler_begin"},
    {"p_broadcast", &GenPolicy::p_broadcast, 0, kP, true, ListKind::kNone,
     "a new parameter gets a broadcasting shape"},
    {"p_mixed_dtypes", &GenPolicy::p_mixed_dtypes, 0, kP, true, ListKind::kNone,
     "a new parameter may get another dtype than the graph's"},
    {"p_tuple_output", &GenPolicy::p_tuple_output, 0, kP, true, ListKind::kNone,
     "@main returns a tuple even with one natural output"},
    {"p_duplicate_output", &GenPolicy::p_duplicate_output, 0, kP, true, ListKind::kNone,
     "@main's result tuple repeats a field"},
    {"p_unused_input", &GenPolicy::p_unused_input, 0, kP, true, ListKind::kNone,
     "@main gets a parameter nobody uses"},
    {"p_empty_tuple_output", &GenPolicy::p_empty_tuple_output, 0, kP, true, ListKind::kNone,
     "@main's result holds an empty tuple ()"},
    {"p_odd_name", &GenPolicy::p_odd_name, 0, kP, true, ListKind::kNone,
     "an input's name is not an identifier (x3:0): quoted in the text, sanitized in C"},
    {"merge_safe", &GenPolicy::merge_safe, 0, 1, false, ListKind::kNone,
     "nothing TVM refuses: no host path merged regions close into a cycle, no input name clash after sanitizing (0: test the refusals)"},
    // A campaign's draws per case. None is a swarm feature: each is drawn once per case, so
    // switching it off in half the cases' policies would only halve its probability (swarm's gain
    // is in the many draws of one graph that share a probability), and every campaign seed would
    // draw other options than before. Swarm only switches features off, so it could not make the
    // costly oracles (determinism, warnings) more frequent, but off they only check less.
    {"p_merge", &GenPolicy::p_merge, 0, kP, false, ListKind::kNone,
     "a campaign's case runs MergeCompilerRegions (--merge)", KnobUse::kCase},
    {"p_unpacked", &GenPolicy::p_unpacked, 0, kP, false, ListKind::kNone,
     "a campaign's case uses the unpacked API (--api unpacked)", KnobUse::kCase},
    {"p_c_interface", &GenPolicy::p_c_interface, 0, kP, false, ListKind::kNone,
     "a campaign's case with the unpacked API gets the C interface (--interface c)",
     KnobUse::kCase},
    {"p_storage_reuse", &GenPolicy::p_storage_reuse, 0, kP, false, ListKind::kNone,
     "a campaign's case reuses dead intermediates' storage (--storage-reuse)", KnobUse::kCase},
    {"p_small_fuse_depth", &GenPolicy::p_small_fuse_depth, 0, kP, false, ListKind::kNone,
     "a campaign's case gets a FuseOps max depth of 1 to max_small_fuse_depth (--max-fuse-depth)",
     KnobUse::kCase},
    {"max_small_fuse_depth", &GenPolicy::max_small_fuse_depth, 1, 1 << 20, false, ListKind::kNone,
     "largest of those small FuseOps max depths", KnobUse::kCase},
    {"p_determinism", &GenPolicy::p_determinism, 0, kP, false, ListKind::kNone,
     "the determinism oracle checks a campaign's case (--determinism)", KnobUse::kCase},
    {"p_warnings", &GenPolicy::p_warnings, 0, kP, false, ListKind::kNone,
     "the warnings oracle checks a campaign's case (--warnings; costly: gcc per case)",
     KnobUse::kCase},
    {"p_usmp", &GenPolicy::p_usmp, 0, kP, false, ListKind::kNone,
     "a campaign's case runs TVM's memory planner (--usmp on; TVM v0.9 on)", KnobUse::kCase},
    {"p_usmp_algorithm", &GenPolicy::p_usmp_algorithm, 0, kP, false, ListKind::kNone,
     "a case with USMP gets one of its algorithms (--usmp-algorithm)", KnobUse::kCase},
    {"p_external_pools", &GenPolicy::p_external_pools, 0, kP, false, ListKind::kNone,
     "a case with USMP gets pools the application allocates (--pools external)", KnobUse::kCase},
    {"p_workspace_io", &GenPolicy::p_workspace_io, 0, kP, false, ListKind::kNone,
     "a case with USMP and the C interface keeps its I/O in the workspace (--workspace-io)",
     KnobUse::kCase},
    {"p_workspace_alignment", &GenPolicy::p_workspace_alignment, 0, kP, false, ListKind::kNone,
     "a campaign's case gets a workspace alignment of 4 to 64 (--workspace-alignment)",
     KnobUse::kCase},
    {"p_constant_alignment", &GenPolicy::p_constant_alignment, 0, kP, false, ListKind::kNone,
     "a campaign's case gets a constant alignment of 4 to 64 (--constant-alignment)",
     KnobUse::kCase},
    {"p_no_link_params", &GenPolicy::p_no_link_params, 0, kP, false, ListKind::kNone,
     "a campaign's case does not link its parameters (--no-link-params)", KnobUse::kCase},
  };
  // clang-format on
  return kTable;
}

const Knob& knob(std::string_view name) {
  for (const auto& k : table()) {
    if (k.name == name) return k;
  }
  throw ir::Error("unknown generator knob '" + std::string(name) + "'");
}

std::string format_double(double v) {
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, v);
  return std::string(buf, res.ptr);
}

[[noreturn]] void bad_value(const Knob& k, std::string_view value, const std::string& why) {
  throw ir::Error("knob " + std::string(k.name) + ": bad value '" + std::string(value) +
                  "': " + why);
}

std::optional<double> parse_double(std::string_view s) {
  double v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size() || !std::isfinite(v)) {
    return std::nullopt;
  }
  return v;
}

std::optional<long long> parse_int(std::string_view s) {
  long long v = 0;
  auto res = std::from_chars(s.data(), s.data() + s.size(), v);
  if (res.ec != std::errc() || res.ptr != s.data() + s.size()) return std::nullopt;
  return v;
}

// Target names end up in attributes and (sanitized) in C symbols; keep them to one token.
bool valid_target_name(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (c == ',' || c == ':' || c == '=' || c == '"' || c == '\\' || c == ' ' || c == '\t' ||
        c == '\n' || c == '\r' || static_cast<unsigned char>(c) < 0x20) {
      return false;
    }
  }
  return true;
}

// Checks one entry name for the list kind; returns an error text or empty.
std::string check_entry_name(ListKind kind, std::string_view name) {
  switch (kind) {
    case ListKind::kTarget:
      return valid_target_name(name) ? ""
                                     : "target name must be non-empty, without , : = \" or spaces";
    case ListKind::kDtype:
      return ir::parse_dtype(name) ? "" : "unknown dtype '" + std::string(name) + "'";
    case ListKind::kOp: {
      auto op = ir::parse_op(name);
      return op && ir::is_elementwise(*op) ? ""
                                           : "not an elementwise op: '" + std::string(name) + "'";
    }
    case ListKind::kNone:
      break;
  }
  return "";
}

WeightList parse_weights(const Knob& k, std::string_view text) {
  WeightList out;
  std::size_t pos = 0;
  while (pos <= text.size()) {
    std::size_t comma = text.find(',', pos);
    if (comma == std::string_view::npos) comma = text.size();
    std::string_view item = text.substr(pos, comma - pos);
    std::size_t colon = item.rfind(':');
    if (colon == std::string_view::npos)
      bad_value(k, text, "expected name:weight in '" + std::string(item) + "'");
    std::string_view name = item.substr(0, colon);
    auto w = parse_double(item.substr(colon + 1));
    if (!w || *w < 0)
      bad_value(k, text, "weight of '" + std::string(name) + "' is not a number >= 0");
    if (std::string why = check_entry_name(k.list, name); !why.empty()) bad_value(k, text, why);
    for (const auto& e : out) {
      if (e.name != name) continue;
      std::string why = "'";
      why += name;
      why += "' is listed twice";
      bad_value(k, text, why);
    }
    out.push_back({std::string(name), *w});
    pos = comma + 1;
  }
  bool any = false;
  for (const auto& e : out) any = any || e.weight > 0;
  if (!any) bad_value(k, text, "needs at least one positive weight");
  return out;
}

std::string format_weights(const WeightList& list) {
  std::string out;
  for (const auto& e : list) {
    if (!out.empty()) out += ',';
    out += e.name + ":" + format_double(e.weight);
  }
  return out;
}

// Range and list checks of one knob's current value; throws ir::Error.
void check_knob(const GenPolicy& p, const Knob& k) {
  std::visit(
      [&](auto member) {
        using T = std::remove_cvref_t<decltype(p.*member)>;
        const auto& v = p.*member;
        if constexpr (std::is_same_v<T, WeightList>) {
          parse_weights(k, format_weights(v));
        } else if constexpr (std::is_same_v<T, bool>) {
        } else {
          if (!(static_cast<double>(v) >= k.lo && static_cast<double>(v) <= k.hi)) {
            throw ir::Error("knob " + std::string(k.name) + " = " + format_double(v) +
                            " is outside [" + format_double(k.lo) + ", " + format_double(k.hi) +
                            "]");
          }
        }
      },
      k.member);
}

}  // namespace

std::vector<std::string> knob_names() {
  std::vector<std::string> out;
  for (const auto& k : table()) out.emplace_back(k.name);
  return out;
}

std::string knob_help(std::string_view name) { return std::string(knob(name).help); }

KnobUse knob_use(std::string_view name) { return knob(name).use; }

double knob_number(const GenPolicy& policy, std::string_view name) {
  const Knob& k = knob(name);
  return std::visit(
      [&](auto member) -> double {
        const auto& v = policy.*member;
        using T = std::remove_cvref_t<decltype(v)>;
        if constexpr (std::is_same_v<T, WeightList>) {
          throw ir::Error("knob " + std::string(k.name) + " is a weight list, not a number");
        } else {
          return static_cast<double>(v);
        }
      },
      k.member);
}

std::string get_knob(const GenPolicy& policy, std::string_view name) {
  const Knob& k = knob(name);
  return std::visit(
      [&](auto member) -> std::string {
        const auto& v = policy.*member;
        using T = std::remove_cvref_t<decltype(v)>;
        if constexpr (std::is_same_v<T, WeightList>) {
          return format_weights(v);
        } else if constexpr (std::is_same_v<T, bool>) {
          return v ? "1" : "0";
        } else if constexpr (std::is_same_v<T, int>) {
          return std::to_string(v);
        } else {
          return format_double(v);
        }
      },
      k.member);
}

void set_knob(GenPolicy& policy, std::string_view name, std::string_view value) {
  const Knob& k = knob(name);
  std::visit(
      [&](auto member) {
        auto& slot = policy.*member;
        using T = std::remove_cvref_t<decltype(slot)>;
        if constexpr (std::is_same_v<T, WeightList>) {
          slot = parse_weights(k, value);
        } else if constexpr (std::is_same_v<T, bool>) {
          if (value == "1" || value == "true") {
            slot = true;
          } else if (value == "0" || value == "false") {
            slot = false;
          } else {
            bad_value(k, value, "expected 0, 1, true or false");
          }
        } else if constexpr (std::is_same_v<T, int>) {
          auto v = parse_int(value);
          if (!v) bad_value(k, value, "expected an integer");
          if (*v < k.lo || *v > k.hi) {
            bad_value(k, value,
                      "outside [" + format_double(k.lo) + ", " + format_double(k.hi) + "]");
          }
          slot = static_cast<int>(*v);
        } else {
          auto v = parse_double(value);
          if (!v) bad_value(k, value, "expected a number");
          if (*v < k.lo || *v > k.hi) {
            bad_value(k, value,
                      "outside [" + format_double(k.lo) + ", " + format_double(k.hi) + "]");
          }
          slot = *v;
        }
      },
      k.member);
}

std::string describe(const GenPolicy& policy) {
  std::string out;
  for (const auto& k : table()) {
    if (!out.empty()) out += ' ';
    out += std::string(k.name) + "=" + get_knob(policy, k.name);
  }
  return out;
}

void validate(const GenPolicy& policy) {
  for (const auto& k : table()) check_knob(policy, k);
  auto order = [](const char* lo_name, int lo, const char* hi_name, int hi) {
    if (lo > hi) {
      throw ir::Error(std::string("generator policy: ") + lo_name + " = " + std::to_string(lo) +
                      " exceeds " + hi_name + " = " + std::to_string(hi));
    }
  };
  order("min_ops", policy.min_ops, "max_ops", policy.max_ops);
  order("min_rank", policy.min_rank, "max_rank", policy.max_rank);
  order("min_dim", policy.min_dim, "max_dim", policy.max_dim);
}

GenPolicy with_size(GenPolicy policy, int ops) {
  if (ops < 1) throw ir::Error("generator size must be at least 1, got " + std::to_string(ops));
  policy.min_ops = ops;
  policy.max_ops = ops;
  return policy;
}

GenPolicy swarm(const GenPolicy& base, Decisions& decisions) {
  GenPolicy out = base;
  for (const auto& k : table()) {
    if (!k.swarm) continue;
    if (auto* member = std::get_if<double GenPolicy::*>(&k.member)) {
      if (decisions.chance(0.5)) out.*(*member) = 0;
    } else if (auto* list_member = std::get_if<WeightList GenPolicy::*>(&k.member)) {
      WeightList& list = out.*(*list_member);
      std::vector<std::size_t> kept;
      std::vector<std::size_t> positive;
      std::vector<std::size_t> compiled;  // targets other than `default`
      bool kept_compiled = false;
      for (std::size_t i = 0; i < list.size(); ++i) {
        if (list[i].weight <= 0) continue;
        positive.push_back(i);
        const bool is_compiled = k.list == ListKind::kTarget && list[i].name != kHostTarget;
        if (is_compiled) compiled.push_back(i);
        if (decisions.chance(0.5)) {
          kept.push_back(i);
          kept_compiled = kept_compiled || is_compiled;
        }
      }
      if (!kept_compiled && !compiled.empty()) {
        // Keep a compiled target when the base has one: with only `default` regions nothing is
        // partitioned out, so external functions and their codegen go untested. With the default
        // targets this also doubles the policies that mix two targets (ccompiler and default),
        // which merge-restriction and sibling-region bugs need.
        kept.push_back(compiled[decisions.below(compiled.size())]);
      } else if (kept.empty() && !positive.empty()) {
        // Keep at least one entry so the feature space stays non-empty.
        kept.push_back(positive[decisions.below(positive.size())]);
      }
      for (std::size_t i : positive) {
        bool keep = false;
        for (std::size_t j : kept) keep = keep || i == j;
        if (!keep) list[i].weight = 0;
      }
    }
  }
  // Last, so the knobs above are drawn as before.
  if (out.merge_safe && decisions.chance(kMergeUnsafeShare)) out.merge_safe = false;
  return out;
}

GenPolicy swarm(const GenPolicy& base, ir::Rng& rng) {
  RngDecisions decisions(rng);
  return swarm(base, decisions);
}

}  // namespace aotfuzz::generator

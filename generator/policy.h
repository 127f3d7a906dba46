// Generation policy: plain data (limits, probabilities, weights) that steers the graph builder,
// its one table of named knobs, and swarm testing over it.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "ir/rng.h"

namespace aotfuzz::generator {

class Decisions;

/// One named choice with a relative weight (a target, a dtype or an op).
struct Weighted {
  std::string name;
  double weight = 0;
  friend bool operator==(const Weighted&, const Weighted&) = default;
};
/// Weights are relative; entries of weight 0 are never chosen. Order matters only for the
/// byte decoder, whose exhausted input picks the first positive entry.
using WeightList = std::vector<Weighted>;

/// Everything the builder may vary, as plain data (in the style of yarpgen's GenPolicy). Every
/// field is a knob of the same name (see knob_names(); `p_*` are probabilities in [0, 1]).
/// Defaults aim at small add/tuple graphs with a few regions, the ground of the #9036 class.
struct GenPolicy {
  // --- sizes ---------------------------------------------------------------------------------
  /// Builder steps per graph, drawn in [min_ops, max_ops]. A step makes one op (add, ...), one
  /// tuple or one TupleGetItem; annotations and main's output tuple are not steps.
  int min_ops = 1;
  int max_ops = 12;
  /// Parameters of @main are created on demand, at most this many.
  int max_inputs = 6;
  /// Tensor ranks and dimensions. Every tensor's shape is derived from one per-graph shape of
  /// rank in [min_rank, max_rank] with dims in [min_dim, max_dim], so any two broadcast.
  int min_rank = 1;
  int max_rank = 3;
  int min_dim = 1;
  int max_dim = 10;
  /// Elements of the per-graph shape at most: larger draws have their largest dimension halved
  /// until they fit, so that knobs never make a graph over the memory budget
  /// (reference/footprint.h) out of a few huge tensors.
  int max_tensor_elements = 1 << 16;
  /// Fields of a tuple built by a step: 2..max_tuple_fields.
  int max_tuple_fields = 3;
  /// Deepest tuple nesting (a tuple of tensors has depth 1).
  int max_tuple_depth = 3;

  // --- choices by weight -----------------------------------------------------------------------
  /// Region targets. Any name works; `default` means "leave to the host" (PartitionGraph strips
  /// it), every other name is compiled like `ccompiler`.
  WeightList targets = {{"ccompiler", 3}, {"default", 1}};
  /// Element types ("float32", "int32", "int8"); one is the graph's main dtype.
  WeightList dtypes = {{"float32", 8}, {"int32", 1}, {"int8", 1}};
  /// Elementwise ops ("add", "subtract", "multiply"). The product is about add/tuple graphs.
  WeightList ops = {{"add", 1}, {"subtract", 0}, {"multiply", 0}};

  // --- placement -------------------------------------------------------------------------------
  /// An op is placed on the host (outside every region, between regions) instead of in a region.
  /// (A TupleGetItem of a host tuple, or of a tuple ended by a closed region, is always on the
  /// host: nothing else could read it.)
  double p_host_op = 0.3;
  /// A region op starts a new region rather than growing an open one.
  double p_new_region = 0.4;
  /// A region op takes a value of another open region of the same target directly, which makes
  /// the two one region (TVM merges regions met by one op).
  double p_region_join = 0.05;

  // --- region outputs --------------------------------------------------------------------------
  /// Several outputs per region: after an operand left a region, the op's next operand is another
  /// value of that region or of a same-target region linked to it end->begin (one region after
  /// MergeCompilerRegions), as in TVM #9036; other outside consumers also prefer values of exited
  /// regions that do not leave them yet.
  double p_multi_output = 0.35;
  /// A further use outside a region gets its own compiler_end instead of sharing an existing one
  /// (several ends on one value).
  double p_multi_end = 0.2;

  // --- tuples ----------------------------------------------------------------------------------
  /// A step builds a tuple (on the host, or in a region, which may then end it).
  double p_tuple = 0.12;
  /// A tuple field is itself a tuple (nested tuples).
  double p_nested_tuple = 0.2;
  /// A step takes a field of a tuple nobody reads yet (TupleGetItem); a further read of an
  /// already-read tuple has probability p_tuple_get_item * (1 - p_prefer_unused).
  double p_tuple_get_item = 0.3;
  /// A tuple-typed value may enter a region through compiler_begin (0 keeps region parameters
  /// tensors, as TVM's C codegen expects).
  double p_begin_on_tuple = 0;

  // --- operands --------------------------------------------------------------------------------
  /// An operand is a value nobody uses yet (the frontier), which keeps the number of outputs of
  /// @main small; otherwise it is a second use of something (or a parameter).
  double p_prefer_unused = 0.75;
  /// An operand that is not from the frontier is a parameter of @main.
  double p_input_operand = 0.4;
  /// ... a constant tensor (Relay's Constant) instead of a parameter: on the host it stays in
  /// @main (FuseOps passes it to a kernel, or fuses a scalar in); into a region it goes through
  /// compiler_begin, and PartitionGraph binds it into the outlined function.
  double p_constant = 0.12;
  /// A constant entering a region arrives as a field of a tuple of constants under one
  /// compiler_begin (`begin((c0, c1)).0`), the shape TVM PR #5476 taught PartitionGraph to bind.
  double p_constant_tuple = 0.35;
  /// A new constant is a scalar (rank 0, whatever min_rank): TVM's FuseOps fuses a scalar
  /// float32 or int32 constant into its consumer's kernel. Other constants take the shapes
  /// parameters take.
  double p_scalar_constant = 0.2;
  /// ... an existing parameter (one input used by several ops/regions) rather than a new one.
  double p_shared_input = 0.5;
  /// An operand comes from the op's own place (its region, or the host) rather than elsewhere.
  double p_local_operand = 0.5;
  /// Both operands of a binary op are the same value (`add(%3, %3)`).
  double p_repeat_operand = 0.1;
  /// A second use of a value in one region shares the existing compiler_begin.
  double p_shared_begin = 0.5;

  // --- types -----------------------------------------------------------------------------------
  /// A new parameter gets a broadcasting shape (leading dims dropped, some dims 1).
  double p_broadcast = 0.2;
  /// A new parameter may get another dtype than the graph's main one.
  double p_mixed_dtypes = 0.1;

  // --- @main's result --------------------------------------------------------------------------
  /// With one natural output, @main still returns a tuple (adding an already-used value, or the
  /// output again when there is none).
  double p_tuple_output = 0.15;
  /// @main's result tuple repeats one of its fields (duplicate outputs).
  double p_duplicate_output = 0.05;
  /// @main gets one parameter nobody uses.
  double p_unused_input = 0.02;
  /// @main's result gets an empty tuple `()` among its fields, or is `()` when it has no other
  /// (TVM #10128: `return ()` did not build).
  double p_empty_tuple_output = 0.03;
  /// An input's name is not an identifier (`x3:0`, as TVM's frontends name inputs): quoted in the
  /// text, sanitized in the C interface. Names stay one C name each after sanitizing, except
  /// without merge_safe, where one in four such names clashes with an earlier one (TVM refuses).
  double p_odd_name = 0.1;

  // --- safety ----------------------------------------------------------------------------------
  /// Never build a host path that MergeCompilerRegions would turn into a cycle: between two
  /// regions it merges (one cyclic region), or through several merged regions that would need
  /// each other's outputs; nor input names that clash after sanitizing. TVM refuses all of these.
  /// Off to test those refusals (swarm turns it off for a share of its policies).
  bool merge_safe = true;

  // --- a campaign's draws per case -------------------------------------------------------------
  // Not read by the builder (KnobUse::kCase): a campaign draws each case's pipeline options and
  // oracles with them, each for the row of oracle/case_flags.def that names it
  // (fuzz/campaign_cases.h). A flag given on the command line fixes its knob to 0 or 1; a system
  // under test may set its own default (SystemUnderTest::generation_knobs).
  /// The case runs MergeCompilerRegions (--merge).
  double p_merge = 0.5;
  /// The case calls its kernels with the unpacked API (--api unpacked).
  double p_unpacked = 0.5;
  /// A case with the unpacked API gets the C entry point interface (--interface c).
  double p_c_interface = 0.5;
  /// The case reuses dead intermediates' storage (--storage-reuse).
  double p_storage_reuse = 0.75;
  /// The case gets a small FuseOps max depth, in [1, max_small_fuse_depth] (--max-fuse-depth):
  /// FuseOps' size limit is otherwise never reached by graphs of a few ops. Depth 1 fuses
  /// nothing (every operator its own kernel).
  double p_small_fuse_depth = 0.125;
  int max_small_fuse_depth = 4;
  /// The determinism oracle checks the case (--determinism): it generates the C twice, a tenth
  /// of a case's time.
  double p_determinism = 0.125;
  /// The warnings oracle checks the case (--warnings): it runs gcc on the case's C, dozens of
  /// times a batched case's cost, so one case in 512 costs a campaign several percent of its
  /// cases per second (docs/fuzzing.md).
  double p_warnings = 1.0 / 512;
  // The AoT executor's memory configuration (oracle::MemoryOptions): TVM v0.9 on, so 0 here and
  // set by a TVM system for what its release has (tvm/system.cc).
  /// The case runs TVM's Unified Static Memory Planner (--usmp on).
  double p_usmp = 0;
  /// A case with USMP gets one of USMP's algorithms, each as likely (--usmp-algorithm).
  double p_usmp_algorithm = 0;
  /// A case with USMP gets pools the application allocates (--pools external).
  double p_external_pools = 0;
  /// A case with USMP and the C interface keeps its inputs and outputs in the workspace pool
  /// (--workspace-io).
  double p_workspace_io = 0;
  /// The case gets a workspace alignment of 4 to 64 (--workspace-alignment).
  double p_workspace_alignment = 0;
  /// The case gets a constant alignment of 4 to 64 (--constant-alignment).
  double p_constant_alignment = 0;
  /// The case does not link its parameters into the module (--no-link-params).
  double p_no_link_params = 0;
};

/// What reads a knob: the graph builder, or a campaign drawing each case's pipeline options and
/// oracles (fuzz/campaign_cases.h). A graph never depends on the latter.
enum class KnobUse { kGraph, kCase };

/// Names of every knob, in table order (the fields of GenPolicy).
std::vector<std::string> knob_names();
/// One line of help for the knob `name`; throws ir::Error for an unknown knob.
std::string knob_help(std::string_view name);
/// What reads the knob `name`; throws ir::Error for an unknown knob.
KnobUse knob_use(std::string_view name);
/// The value of a knob that is a number (a probability, an integer, a boolean as 0 or 1), exactly
/// as the policy holds it; throws ir::Error for an unknown knob or a weight list.
double knob_number(const GenPolicy& policy, std::string_view name);
/// The knob's value in the syntax set_knob accepts: `0.3`, `12`, `1`, `ccompiler:3,default:1`.
std::string get_knob(const GenPolicy& policy, std::string_view name);
/// Sets one knob from text. Probabilities must lie in [0, 1], integers in their range, booleans
/// are 0/1/true/false, weight lists are `name:weight,...` with known dtype/op names. Throws
/// ir::Error naming the knob on an unknown knob or a bad value; `policy` is unchanged then.
void set_knob(GenPolicy& policy, std::string_view name, std::string_view value);
/// Every knob as `name=value`, space separated, in table order: feeding the pieces back to
/// set_knob reproduces the policy.
std::string describe(const GenPolicy& policy);
/// Throws ir::Error unless the policy is usable: min <= max pairs, at least one positive weight
/// per list, values in range. generate() and decode() call it.
void validate(const GenPolicy& policy);
/// `policy` with exactly `ops` builder steps per graph (the CLI's `--size N`).
GenPolicy with_size(GenPolicy policy, int ops);

/// Swarm testing (Groce et al., ISSTA 2012): a copy of `base` where each feature (each `p_*`
/// feature probability, each weighted target/dtype/op) is independently switched off with
/// probability 1/2. Features off in `base` stay off; every weight list keeps one entry, and the
/// targets keep a compiled (non-`default`) one when `base` has one: no policy leaves every
/// region to the host. One policy in kMergeUnsafeShare also drops `merge_safe`, so campaigns see
/// graphs TVM must refuse and the structural oracle judges the refusals.
inline constexpr double kMergeUnsafeShare = 0.125;
GenPolicy swarm(const GenPolicy& base, ir::Rng& rng);
GenPolicy swarm(const GenPolicy& base, Decisions& decisions);

}  // namespace aotfuzz::generator

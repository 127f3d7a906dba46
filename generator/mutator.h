// Structure-aware mutation of annotated modules for the text-based fuzz targets' custom mutator:
// region-level edits (add, remove, split, merge, retarget a region, give it another output), new
// ops and outputs, tuples; every result passes ir::verify(), so the corpus stays readable .relay.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "ir/module.h"
#include "ir/rng.h"

namespace aotfuzz::generator {

/// The kinds of graph mutation, in the order of graph_mutation_names().
enum class GraphMutation {
  kAddRegionOp,     ///< a new op in a new region on two host values, made an output of @main
  kAddHostOp,       ///< a new host op on two host values, made an output of @main
  kWrapInRegion,    ///< a host op gets begins on its operands and an end on its result
  kRemoveRegion,    ///< every begin and end of one region dropped (its ops go to the host)
  kSplitRegion,     ///< an edge inside a region gets an end and a begin (the region may split)
  kMergeRegions,    ///< a begin on an end of the same target dropped (the regions join)
  kRetargetRegion,  ///< one region's begins and ends get another target
  kExposeValue,     ///< a value inside a region gets its own end and becomes an output of @main
  kAddOutput,       ///< a host value becomes (another) field of @main's result tuple
  kWrapInTuple,     ///< a host value is read through `(v, w).0` instead
  kReplaceOperand,  ///< an op operand replaced by another host value (or a new input) of its type
  kCount
};

/// "add-region-op", "add-host-op", ... (for logs and tests).
std::string_view graph_mutation_name(GraphMutation m);

/// Applies `mutation` at a place chosen with `rng`. Returns nullopt when the module offers no
/// place for it or the result fails ir::verify(). Only @main changes; other functions are kept.
std::optional<ir::Module> mutate_graph(const ir::Module& module, GraphMutation mutation,
                                       ir::Rng& rng);

/// Up to `attempts` random mutations until one gives a verified module (nullopt if none did).
std::optional<ir::Module> mutate_graph(const ir::Module& module, ir::Rng& rng, int attempts = 8);

/// The mutant of `module` for seed `seed`: one to four mutations in a row from Rng(seed), or the
/// module itself when none applies. A pure function of both, so that `aotfuzz gen --seed S
/// --mutate FILE` prints again the graph of a `fuzz --corpus` case.
ir::Module mutant(const ir::Module& module, std::uint64_t seed);

/// Both modules side by side: the parameters of `a` then `b`, @main returning the outputs of
/// both (then, sometimes, one op joining a host value of each). nullopt unless both are single-
/// function annotated modules or the result does not verify.
std::optional<ir::Module> cross_graphs(const ir::Module& a, const ir::Module& b, ir::Rng& rng);

}  // namespace aotfuzz::generator

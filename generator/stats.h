// Shape statistics of an annotated module, for generator tuning, campaign reports and tests.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ir/module.h"

namespace aotfuzz::generator {

/// Counts over @main of an annotated (not yet partitioned) module.
struct GraphStats {
  /// Parameters of @main.
  std::size_t inputs = 0;
  /// Elementwise op calls (add, subtract, multiply).
  std::size_t ops = 0;
  /// Tuple nodes, @main's result tuple included, tuples of constants not.
  std::size_t tuples = 0;
  std::size_t tuple_get_items = 0;
  /// Constant nodes, and tuples whose fields are all constants (region inputs PartitionGraph
  /// binds; neither counts as a host op).
  std::size_t constants = 0;
  std::size_t constant_tuples = 0;
  std::size_t begins = 0;
  std::size_t ends = 0;
  /// Regions as TVM's analysis builds them (ir::RegionSet), before any merging.
  std::size_t regions = 0;
  /// Regions with more than one distinct output tensor (an end on a tuple counts its fields).
  std::size_t multi_output_regions = 0;
  /// Regions holding exactly one non-annotation node.
  std::size_t single_op_regions = 0;
  /// Non-annotation nodes outside every region (parameters excluded).
  std::size_t host_ops = 0;
  /// Host ops with a region upstream and a region downstream.
  std::size_t host_ops_between_regions = 0;
  /// Values with several compiler_end nodes.
  std::size_t multi_end_values = 0;
  /// compiler_end nodes whose argument is a tuple.
  std::size_t ends_on_tuples = 0;
  /// Flattened outputs of @main.
  std::size_t outputs = 0;
  /// @main returns a tuple that repeats a field.
  bool duplicate_outputs = false;
  /// Distinct region targets, sorted.
  std::vector<std::string> targets;
};

/// The statistics of `module`'s @main. Throws ir::VerifyError if its annotations are invalid.
GraphStats graph_stats(const ir::Module& module);

}  // namespace aotfuzz::generator

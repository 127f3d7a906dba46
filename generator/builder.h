// The random graph builder: annotated @main modules that always pass ir::verify(), built from a
// GenPolicy and a stream of Decisions (a seed for campaigns, a byte string for libFuzzer).
#pragma once

#include <cstddef>
#include <cstdint>

#include "generator/decisions.h"
#include "generator/policy.h"
#include "ir/module.h"
#include "ir/rng.h"

namespace aotfuzz::generator {

/// Builds one module whose every random choice comes from `decisions`.
///
/// Ops are made one at a time in topological order, each on the host or in a region (a target
/// from `policy.targets`). Edges into a region get `compiler_begin`, edges out `compiler_end`;
/// an op in a region takes all its operands from that region (after begins). A region closes when
/// a value first leaves it, so regions stay convex and the region graph acyclic; values of
/// regions of different targets never meet without end/begin. Every op reaches @main's result
/// (the values nobody uses become its outputs). Throws ir::Error when `policy` is invalid.
ir::Module build(const GenPolicy& policy, Decisions& decisions);

/// `build` over `rng`: the same policy and seed give the same module on any machine.
ir::Module generate(const GenPolicy& policy, ir::Rng& rng);

/// `build` over a byte string (libFuzzer's input): every byte string decodes to a valid module;
/// decoding stops adding ops once the bytes run out, so short inputs give small graphs.
ir::Module decode(const GenPolicy& policy, const std::uint8_t* data, std::size_t size);

}  // namespace aotfuzz::generator

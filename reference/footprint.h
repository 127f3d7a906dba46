// What a case needs in memory, computed from its types before anything is allocated: the
// resource model every command and the generator check against a budget (docs/design.md,
// "Resource budget"), so that a graph too large for the machine is refused as invalid input
// instead of exhausting memory somewhere downstream.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/module.h"

namespace aotfuzz::reference {

/// Tensor bytes per case allowed by default (inputs, every intermediate and outputs of @main):
/// the reference, the interpreted stages and the compiled program each hold at most about this
/// much, which keeps a worker far inside 2 GB.
inline constexpr std::uint64_t kDefaultMemoryBudget = std::uint64_t{256} << 20;

/// The bytes of every tensor @main's computation holds: its parameters' tensors and each op
/// call's result, each counted once (tuples and TupleGetItem hold no bytes of their own).
/// Saturates at UINT64_MAX; annotations are identities and count nothing.
std::uint64_t tensor_bytes_needed(const ir::Module& module);

/// The bytes of @main's result tensors (what a harness prints, in hex, twice as many characters).
std::uint64_t output_bytes(const ir::Module& module);

/// Why `module` does not fit `budget` bytes (0: no budget), or nullopt when it does. One line
/// naming the figure and the budget.
std::optional<std::string> over_memory_budget(const ir::Module& module, std::uint64_t budget);

}  // namespace aotfuzz::reference

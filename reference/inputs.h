// Deterministic input tensors from a seed, biased towards the values that break code generators
// (signed zeros, NaN payloads, infinities, denormals, integer extremes).
#pragma once

#include <cstdint>
#include <vector>

#include "ir/expr.h"
#include "ir/rng.h"
#include "reference/value.h"

namespace aotfuzz::reference {

/// How input elements are drawn. Rates are per mille so the draw stays integer-only (portable).
struct InputPolicy {
  /// Chance (out of 1000) that an element is a special value (zeros, NaN, Inf, extremes...).
  std::uint32_t special_per_mille = 120;
  /// Chance (out of 1000) that a non-special element is a small integer (exact arithmetic).
  std::uint32_t small_int_per_mille = 250;
};

/// A random float32 bit pattern under `policy`: specials, small integers, moderate magnitudes
/// (about 2^-10 .. 2^6) and, rarely, arbitrary bits.
std::uint32_t random_f32_bits(ir::Rng& rng, const InputPolicy& policy = {});
/// A random int32 under `policy`: INT32_MIN/MAX, 0, +-1, small integers, arbitrary bits.
std::int32_t random_i32(ir::Rng& rng, const InputPolicy& policy = {});
/// A random int8 under `policy`: INT8_MIN/MAX, 0, +-1, small integers, arbitrary bits.
std::int8_t random_i8(ir::Rng& rng, const InputPolicy& policy = {});

/// A random value of `type` (tensor or nested tuple). Throws ValueError for function types or
/// tensors over kMaxTensorBytes.
Value random_value(const ir::Type& type, ir::Rng& rng, const InputPolicy& policy = {});

/// One value per parameter of `main`, in order. Only ir::Rng is used, so the same seed gives the
/// same bytes on every machine; each parameter draws from its own forked stream, so changing
/// one parameter's shape leaves the others' values unchanged.
std::vector<Value> make_inputs(const ir::Function& main, std::uint64_t seed,
                               const InputPolicy& policy = {});

}  // namespace aotfuzz::reference

// Input generation from ir::Rng bit streams only (never std distributions, never host floats
// from arithmetic), so a seed reproduces the same bytes everywhere.
#include "reference/inputs.h"

#include <cstring>

namespace aotfuzz::reference {
namespace {

// Special float32 bit patterns; NaN payloads and denormals also come from draws below.
constexpr std::uint32_t kSpecialF32[] = {
    0x00000000u,  // +0
    0x80000000u,  // -0
    0x7fc00000u,  // canonical quiet NaN
    0x7f800000u,  // +Inf
    0xff800000u,  // -Inf
    0x00000001u,  // smallest denormal
    0x807fffffu,  // largest negative denormal
    0x7f7fffffu,  // FLT_MAX
    0xff7fffffu,  // -FLT_MAX
    0x00800000u,  // FLT_MIN
    0x80800000u,  // -FLT_MIN
    0x3f800000u,  // 1
    0xbf800000u,  // -1
};

std::uint32_t special_f32(ir::Rng& rng) {
  constexpr std::uint64_t kFixed = sizeof kSpecialF32 / sizeof kSpecialF32[0];
  const std::uint64_t pick = rng.below(kFixed + 3);
  if (pick < kFixed) return kSpecialF32[pick];
  const auto r = static_cast<std::uint32_t>(rng.next());
  switch (pick - kFixed) {
    case 0:  // A non-canonical NaN: random sign, quiet or signalling, non-zero payload.
      return (r & 0x80000000u) | 0x7f800000u | ((r & 0x007fffffu) | 1u);
    case 1:  // A random denormal of either sign.
      return (r & 0x80000000u) | ((r & 0x007fffffu) | 1u);
    default:  // A large finite value near overflow.
      return (r & 0x80000000u) | (0x7e800000u + (r & 0x00ffffffu));
  }
}

}  // namespace

std::uint32_t random_f32_bits(ir::Rng& rng, const InputPolicy& policy) {
  if (rng.below(1000) < policy.special_per_mille) return special_f32(rng);
  if (rng.below(1000) < policy.small_int_per_mille) {
    // Small integers, converted exactly (int to float is exact below 2^24).
    const float f = static_cast<float>(rng.range(-16, 16));
    std::uint32_t bits;
    std::memcpy(&bits, &f, sizeof bits);
    return bits;
  }
  const std::uint64_t r = rng.next();
  if ((r & 0xf) == 0) return static_cast<std::uint32_t>(r >> 32);  // Arbitrary bits.
  // Sign, a biased exponent in [117, 133] (about 2^-10 .. 2^6), a random mantissa.
  const auto sign = static_cast<std::uint32_t>((r >> 4) & 1) << 31;
  const auto exponent = static_cast<std::uint32_t>(117 + (r >> 5) % 17) << 23;
  const auto mantissa = static_cast<std::uint32_t>(r >> 32) & 0x007fffffu;
  return sign | exponent | mantissa;
}

std::int32_t random_i32(ir::Rng& rng, const InputPolicy& policy) {
  if (rng.below(1000) < policy.special_per_mille) {
    constexpr std::uint32_t kSpecial[] = {0x80000000u, 0x7fffffffu, 0u,         0xffffffffu,
                                          1u,          0x80000001u, 0x7ffffffeu};
    return static_cast<std::int32_t>(kSpecial[rng.below(sizeof kSpecial / sizeof kSpecial[0])]);
  }
  if (rng.below(1000) < policy.small_int_per_mille) {
    return static_cast<std::int32_t>(rng.range(-16, 16));
  }
  return static_cast<std::int32_t>(static_cast<std::uint32_t>(rng.next()));
}

std::int8_t random_i8(ir::Rng& rng, const InputPolicy& policy) {
  if (rng.below(1000) < policy.special_per_mille) {
    constexpr std::int8_t kSpecial[] = {-128, 127, 0, -1, 1, -127, 126};
    return kSpecial[rng.below(sizeof kSpecial / sizeof kSpecial[0])];
  }
  if (rng.below(1000) < policy.small_int_per_mille) {
    return static_cast<std::int8_t>(rng.range(-8, 8));
  }
  return static_cast<std::int8_t>(static_cast<std::uint8_t>(rng.next()));
}

Value random_value(const ir::Type& type, ir::Rng& rng, const InputPolicy& policy) {
  if (!type || type->is_func()) {
    throw ValueError("cannot make an input of type " +
                     (type ? ir::type_to_string(type) : std::string("null")));
  }
  if (type->is_tuple()) {
    // Recursion depth is bounded by ir::kMaxTypeDepth.
    std::vector<Value> fields;
    fields.reserve(type->fields().size());
    for (const auto& f : type->fields()) fields.push_back(random_value(f, rng, policy));
    return Value::tuple(std::move(fields));
  }
  const std::size_t n = checked_num_elements(type);
  std::vector<std::uint8_t> bytes(n * ir::dtype_bytes(type->dtype()));
  for (std::size_t i = 0; i < n; ++i) {
    switch (type->dtype()) {
      case ir::DType::kFloat32:
      case ir::DType::kInt32: {
        const std::uint32_t w = type->dtype() == ir::DType::kFloat32
                                    ? random_f32_bits(rng, policy)
                                    : static_cast<std::uint32_t>(random_i32(rng, policy));
        for (int b = 0; b < 4; ++b) bytes[4 * i + b] = static_cast<std::uint8_t>(w >> (8 * b));
        break;
      }
      case ir::DType::kInt8:
        bytes[i] = static_cast<std::uint8_t>(random_i8(rng, policy));
        break;
    }
  }
  return Value::tensor(type, std::move(bytes));
}

std::vector<Value> make_inputs(const ir::Function& main, std::uint64_t seed,
                               const InputPolicy& policy) {
  ir::Rng rng(seed);
  std::vector<Value> out;
  out.reserve(main->params().size());
  for (const auto& p : main->params()) {
    ir::Rng stream = rng.fork();
    out.push_back(random_value(p->type(), stream, policy));
  }
  return out;
}

}  // namespace aotfuzz::reference

// The resource model: bytes of tensors from types alone.
#include "reference/footprint.h"

#include <limits>

#include "ir/traversal.h"
#include "ir/type.h"

namespace aotfuzz::reference {
namespace {

constexpr std::uint64_t kSaturated = std::numeric_limits<std::uint64_t>::max();

std::uint64_t add(std::uint64_t a, std::uint64_t b) { return a > kSaturated - b ? kSaturated : a + b; }

// Bytes of every tensor of `type` (a tensor or nested tuple), saturating.
std::uint64_t bytes_of(const ir::Type& type) {
  std::uint64_t total = 0;
  for (const auto& t : ir::flatten_tensors(type)) {
    std::uint64_t n = ir::dtype_bytes(t->dtype());
    for (std::int64_t d : t->shape()) {
      const auto dim = static_cast<std::uint64_t>(d < 0 ? 0 : d);
      if (dim != 0 && n > kSaturated / dim) {
        n = kSaturated;
        break;
      }
      n *= dim;
    }
    total = add(total, n);
  }
  return total;
}

std::string mib(std::uint64_t bytes) {
  if (bytes == kSaturated) return "more than 16 EiB";
  return std::to_string((bytes + (std::uint64_t{1} << 20) - 1) >> 20) + " MiB";
}

}  // namespace

std::uint64_t tensor_bytes_needed(const ir::Module& module) {
  const ir::Function& main = module.main();
  std::uint64_t total = 0;
  for (const auto& p : main->params()) total = add(total, bytes_of(p->type()));
  for (const auto& e : main->body_order()) {
    const auto* call = ir::as<ir::CallNode>(e);
    if (call == nullptr) continue;
    if (call->op() && (*call->op() == ir::Op::kCompilerBegin || *call->op() == ir::Op::kCompilerEnd)) {
      continue;
    }
    total = add(total, bytes_of(e->type()));
  }
  return total;
}

std::uint64_t output_bytes(const ir::Module& module) {
  return bytes_of(module.main()->ret_type());
}

std::optional<std::string> over_memory_budget(const ir::Module& module, std::uint64_t budget) {
  if (budget == 0) return std::nullopt;
  const std::uint64_t need = tensor_bytes_needed(module);
  if (need <= budget) return std::nullopt;
  return "the graph's tensors need " + mib(need) + ", over the memory budget of " + mib(budget) +
         " (--memory-budget MIB)";
}

}  // namespace aotfuzz::reference

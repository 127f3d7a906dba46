// The custom libFuzzer mutator of the text targets (fuzz_parser, fuzz_pipeline_text): parse the
// input, apply a graph mutation (generator/mutator.h), verify, print, so the corpus
// stays readable .relay. Input that does not parse, and one in eight that does (to keep the
// parser's error paths covered), goes to libFuzzer's byte-level LLVMFuzzerMutate instead.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <string_view>

#include "generator/mutator.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verify.h"

extern "C" std::size_t LLVMFuzzerMutate(std::uint8_t* data, std::size_t size, std::size_t max_size);

namespace {

namespace ir = aotfuzz::ir;

std::optional<ir::Module> parse(const std::uint8_t* data, std::size_t size) {
  try {
    ir::Module m = ir::parse_module(std::string_view(reinterpret_cast<const char*>(data), size));
    ir::verify(m);
    return m;
  } catch (const ir::Error&) {
    return std::nullopt;
  }
}

// Copies `text` into `out` if it fits; its size, or 0.
std::size_t emit(const std::string& text, std::uint8_t* out, std::size_t max_size) {
  if (text.empty() || text.size() > max_size) return 0;
  std::memcpy(out, text.data(), text.size());
  return text.size();
}

}  // namespace

extern "C" std::size_t LLVMFuzzerCustomMutator(std::uint8_t* data, std::size_t size,
                                               std::size_t max_size, unsigned int seed) {
  ir::Rng rng(seed);
  if (rng.below(8) != 0) {
    if (auto m = parse(data, size)) {
      if (auto mutated = aotfuzz::generator::mutate_graph(*m, rng)) {
        if (std::size_t n = emit(ir::print_module(*mutated), data, max_size)) return n;
      }
    }
  }
  return LLVMFuzzerMutate(data, size, max_size);
}

extern "C" std::size_t LLVMFuzzerCustomCrossOver(const std::uint8_t* data1, std::size_t size1,
                                                 const std::uint8_t* data2, std::size_t size2,
                                                 std::uint8_t* out, std::size_t max_out_size,
                                                 unsigned int seed) {
  ir::Rng rng(seed);
  auto a = parse(data1, size1);
  auto b = parse(data2, size2);
  if (a && b) {
    if (auto crossed = aotfuzz::generator::cross_graphs(*a, *b, rng)) {
      if (std::size_t n = emit(ir::print_module(*crossed), out, max_out_size)) return n;
    }
  }
  // Not two graphs: splice the texts at random points.
  const std::size_t cut1 = size1 ? rng.below(size1 + 1) : 0;
  const std::size_t cut2 = size2 ? rng.below(size2 + 1) : 0;
  const std::size_t n = std::min(max_out_size, cut1 + (size2 - cut2));
  const std::size_t first = std::min(cut1, n);
  // (memcpy's pointers must be valid even for zero bytes, and an empty input may have none.)
  if (first > 0) std::memcpy(out, data1, first);
  if (n > first) std::memcpy(out + first, data2 + cut2, n - first);
  return n;
}

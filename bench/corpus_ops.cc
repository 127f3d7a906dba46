// What a fuzz_pipeline corpus holds: decodes every input as the target does (byte 0 the flags,
// the rest through generator::decode with the target's policy) and prints how many ops the
// graphs have, so an executions-per-second figure can say which graph sizes it was measured on.
//   corpus_ops DIR...
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <map>
#include <vector>

#include "fuzz/targets/target_support.h"
#include "generator/builder.h"
#include "generator/stats.h"

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  using namespace aotfuzz;
  if (argc < 2) {
    std::cerr << "usage: corpus_ops DIR...\n";
    return 2;
  }
  std::map<std::size_t, std::size_t> by_ops;
  std::size_t inputs = 0, total_ops = 0;
  for (int a = 1; a < argc; ++a) {
    std::error_code ec;
    fs::directory_iterator it(argv[a], ec);
    if (ec) {
      std::cerr << "corpus_ops: " << argv[a] << ": " << ec.message() << "\n";
      return 2;
    }
    for (const auto& entry : it) {
      if (!entry.is_regular_file()) continue;
      std::ifstream in(entry.path(), std::ios::binary);
      const std::vector<std::uint8_t> bytes((std::istreambuf_iterator<char>(in)),
                                            std::istreambuf_iterator<char>());
      if (bytes.empty()) continue;  // the target skips empty inputs too
      const ir::Module m =
          generator::decode(fuzz::targets::fuzz_policy(), bytes.data() + 1, bytes.size() - 1);
      const std::size_t ops = generator::graph_stats(m).ops;
      ++inputs;
      total_ops += ops;
      ++by_ops[ops];
    }
  }
  if (inputs == 0) {
    std::cout << "no inputs\n";
    return 0;
  }
  std::cout << inputs << " inputs, " << static_cast<double>(total_ops) / static_cast<double>(inputs)
            << " ops on average\n";
  for (std::size_t lo = 0; lo <= by_ops.rbegin()->first; lo += 5) {
    std::size_t n = 0;
    for (auto it = by_ops.lower_bound(lo); it != by_ops.end() && it->first < lo + 5; ++it) {
      n += it->second;
    }
    std::cout << "  " << lo << "-" << lo + 4 << " ops: " << n << "\n";
  }
  return 0;
}

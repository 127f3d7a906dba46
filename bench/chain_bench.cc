// The 1,000,000-node add chain (issue 2's figure): parse, verify, interpret, print and the passes,
// each timed once. Usage: chain_bench [nodes]   (default 1000000)
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "aot/pipeline.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verify.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace {

template <class F>
double seconds(F&& f) {
  auto t0 = std::chrono::steady_clock::now();
  f();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aotfuzz;
  const long n = argc > 1 ? std::atol(argv[1]) : 1000000;
  // One ccompiler region around the whole chain, so the passes have work to do.
  std::string text = "def @main(%x: Tensor[(1), float32]) {\n";
  text += "  %0 = annotation.compiler_begin(%x, compiler=\"ccompiler\");\n";
  text += "  %1 = add(%0, %0);\n";
  for (long i = 2; i <= n; ++i) {
    text += "  %" + std::to_string(i) + " = add(%" + std::to_string(i - 1) + ", %0);\n";
  }
  text += "  annotation.compiler_end(%" + std::to_string(n) + ", compiler=\"ccompiler\")\n}\n";
  ir::Module m;
  std::printf("chain of %ld adds (%zu bytes of text)\n", n, text.size());
  std::printf("parse+typecheck  %.2f s\n", seconds([&] { m = ir::parse_module(text, "chain"); }));
  std::printf("verify           %.2f s\n", seconds([&] { ir::verify(m); }));
  std::string printed;
  std::printf("print            %.2f s\n", seconds([&] { printed = ir::print_module(m); }));
  auto inputs = reference::make_inputs(m.main(), 1);
  std::printf("interpret        %.2f s\n", seconds([&] { (void)reference::run_main(m, inputs); }));
  aot::Options opts;
  std::printf("passes (merge)   %.2f s\n", seconds([&] { (void)aot::run_passes(m, opts); }));
  return 0;
}

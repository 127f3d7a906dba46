// Corpus tier: one ctest per corpus file. The file must carry a header (origin and expectation),
// parse, verify, round-trip through the printer and interpret deterministically; then it is
// replayed exactly as `aotfuzz replay FILE` replays it: every `// replay: <flags> => <signature>`
// line is one differential test (none: pass with --merge and with --no-merge).
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "bundles/replay.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/structural.h"
#include "ir/verify.h"
#include "reference/inputs.h"
#include "reference/interpreter.h"

namespace {

int fail(const std::string& path, const std::string& why) {
  std::fprintf(stderr, "%s: FAILED: %s\n", path.c_str(), why.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace aotfuzz;
  if (argc != 2) {
    std::fprintf(stderr, "usage: corpus_file_check FILE.relay\n");
    return 2;
  }
  const std::string path = argv[1];
  std::ifstream in(path, std::ios::binary);
  if (!in) return fail(path, "cannot open");
  std::stringstream ss;
  ss << in.rdbuf();
  const std::string text = ss.str();
  if (text.rfind("//", 0) != 0) return fail(path, "no header comment");
  if (text.find("origin:") == std::string::npos && text.find("Expect") == std::string::npos) {
    return fail(path, "the header says neither where the file came from nor what it expects");
  }
  try {
    ir::Module m = ir::parse_module(text, path);
    ir::verify(m);
    const std::string printed = ir::print_module(m);
    ir::Module again = ir::parse_module(printed, path + " (reprinted)");
    if (ir::print_module(again) != printed) return fail(path, "print/parse/print is not stable");
    if (!ir::structural_equal(m, again)) return fail(path, "reprinted module differs");
    auto inputs = reference::make_inputs(m.main(), 1);
    auto a = reference::run_main(m, inputs);
    auto b = reference::run_main(again, inputs);
    if (!reference::bitwise_equal(a, b)) return fail(path, "interpretation differs after reprint");
  } catch (const ir::Error& e) {
    return fail(path, e.what());
  }
  const bundles::FileReplay replay = bundles::replay_file(path);
  for (const auto& run : replay.runs) {
    std::printf("%s: '%s' => %s (expected %s)%s\n", path.c_str(), run.line.flags.c_str(),
                run.actual.c_str(), run.line.expected.c_str(), run.ok ? "" : "  FAILED");
  }
  if (!replay.ok()) return fail(path, "\n" + replay.failure_text());
  std::printf("%s: ok\n", path.c_str());
  return 0;
}

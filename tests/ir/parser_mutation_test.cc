// Mutation robustness of the parser: deterministic byte and token mutations of real graphs must
// either parse or raise ir::ParseError, and whatever parses must print and parse back stably.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/dot.h"
#include "ir/error.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/rng.h"
#include "ir/verify.h"
#include "tests/support/files.h"

namespace aotfuzz::ir {
namespace {

namespace fs = std::filesystem;

using test_support::conformance_files;
using test_support::read_text;

// Grammar fragments worth splicing in: keywords, sigils, brackets, numbers at the limits,
// comment and string delimiters, and bytes the lexer must reject.
const std::vector<std::string>& fragments() {
  static const std::vector<std::string> kFragments = {"def",
                                                      "fn",
                                                      "@main",
                                                      "@f",
                                                      "%0",
                                                      "%x",
                                                      "%p0",
                                                      "(",
                                                      ")",
                                                      "{",
                                                      "}",
                                                      "[",
                                                      "]",
                                                      ",",
                                                      ";",
                                                      ":",
                                                      "=",
                                                      "->",
                                                      ".",
                                                      ".0",
                                                      ".1",
                                                      ".9",
                                                      "#",
                                                      "\"",
                                                      "/*",
                                                      "*/",
                                                      "//",
                                                      "\n",
                                                      "\\",
                                                      "Tensor",
                                                      "float32",
                                                      "int32",
                                                      "int8",
                                                      "float64",
                                                      "add",
                                                      "multiply",
                                                      "annotation.compiler_begin",
                                                      "annotation.compiler_end",
                                                      "compiler=\"ccompiler\"",
                                                      "Primitive=1",
                                                      "-1",
                                                      "0",
                                                      "65536",
                                                      "99999999999999999999",
                                                      "(%x,)",
                                                      "()",
                                                      "Tensor[(), float32]",
                                                      "fn (%p0: float32) { %p0 }",
                                                      std::string(1, '\0'),
                                                      "\xff",
                                                      "\x01",
                                                      "#[version = \"0.0.5\"]"};
  return kFragments;
}

// Applies one to four random edits: bit flips, byte overwrites, insertions, deletions,
// fragment splices, chunk copies from any seed, truncation.
std::string mutate(const std::string& base, const std::vector<std::string>& seeds, Rng& rng) {
  std::string s = base;
  const int edits = 1 + static_cast<int>(rng.below(4));
  for (int e = 0; e < edits; ++e) {
    const std::size_t pos = rng.below(s.size() + 1);
    switch (rng.below(7)) {
      case 0:
        if (pos < s.size()) s[pos] = static_cast<char>(s[pos] ^ (1 << rng.below(8)));
        break;
      case 1:
        if (pos < s.size()) s[pos] = static_cast<char>(rng.below(256));
        break;
      case 2:
        s.insert(pos, 1, static_cast<char>(rng.below(256)));
        break;
      case 3:
        s.erase(pos, 1 + rng.below(8));
        break;
      case 4:
        s.insert(pos, fragments()[rng.below(fragments().size())]);
        break;
      case 5: {
        const std::string& other = seeds[rng.below(seeds.size())];
        const std::size_t from = rng.below(other.size());
        s.insert(pos, other.substr(from, 1 + rng.below(60)));
        break;
      }
      default:
        s.resize(pos);
        break;
    }
  }
  return s;
}

struct Tally {
  int parsed = 0;
  int rejected = 0;
};

// The contract for one input: ParseError with a sane position, or a module that prints, parses
// back to the same text, verifies or fails with an ir::Error, and draws.
void check_one(const std::string& text, Tally& tally) {
  try {
    Module m = parse_module(text, "mutant.relay");
    ++tally.parsed;
    const std::string printed = print_module(m);
    Module again = parse_module(printed, "printed.relay");
    EXPECT_EQ(print_module(again), printed) << "input:\n" << text;
    try {
      verify(m);
    } catch (const Error&) {
      // Parsing does not verify; rejecting here is fine.
    }
    EXPECT_FALSE(to_dot(m).empty());
  } catch (const ParseError& e) {
    ++tally.rejected;
    EXPECT_GE(e.line(), 1) << e.what();
    EXPECT_GE(e.col(), 1) << e.what();
    EXPECT_EQ(std::string(e.what()).rfind(e.file() + ":", 0), 0u) << e.what();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "non-ParseError exception " << typeid(e).name() << ": " << e.what()
                  << "\ninput:\n"
                  << text;
  } catch (...) {
    ADD_FAILURE() << "unknown exception\ninput:\n" << text;
  }
}

TEST(ParserMutation, MutatedConformanceGraphsParseOrRaiseParseError) {
  const auto files = conformance_files();
  ASSERT_GE(files.size(), 5u);
  std::vector<std::string> seeds;
  for (const auto& f : files) seeds.push_back(read_text(f));
  Tally tally;
  for (std::size_t i = 0; i < seeds.size(); ++i) {
    SCOPED_TRACE(files[i].string());
    Rng rng(0x5eed0000 + i);
    for (int k = 0; k < 3000; ++k) check_one(mutate(seeds[i], seeds, rng), tally);
  }
  // Both outcomes occur, so the mutations neither always break nor never touch the text.
  EXPECT_GT(tally.parsed, 100);
  EXPECT_GT(tally.rejected, 1000);
}

TEST(ParserMutation, MutatedMultiFunctionAndFusedModulesParseOrRaiseParseError) {
  // Grammar the conformance graphs lack: several defs, attributes, local functions, tuples,
  // projections and type comments.
  const std::string fused = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(10, 10), float32], %w0: Tensor[(10, 10), float32]) -> Tensor[(10, 10), float32] {
  %0 = @ext(%x, %w0) /* ty=(Tensor[(10, 10), float32], Tensor[(10, 10), float32]) */;
  %1 = fn (%p0: (Tensor[(10, 10), float32], Tensor[(10, 10), float32]), Primitive=1) -> Tensor[(10, 10), float32] {
    %2 = %p0.0;
    %3 = %p0.1;
    add(%2, %3) /* ty=Tensor[(10, 10), float32] */
  };
  %1(%0)
}

def @ext(%a: Tensor[(10, 10), float32], %b: Tensor[(10, 10), float32], Inline=1, Compiler="ccompiler", global_symbol="ext", Primitive=1) -> (Tensor[(10, 10), float32], Tensor[(10, 10), float32]) {
  %4 = add(%a, %b);
  (%4, multiply(%4, %a),)
}

def @q(%i: Tensor[(4), int8], %j: int32) { (add(%i, %i), %j) }
)";
  ASSERT_NO_THROW(parse_module(fused));
  std::vector<std::string> seeds{fused};
  for (const auto& f : conformance_files()) seeds.push_back(read_text(f));
  Tally tally;
  Rng rng(0xf00d);
  for (int k = 0; k < 4000; ++k) check_one(mutate(fused, seeds, rng), tally);
  EXPECT_GT(tally.parsed, 0);
  EXPECT_GT(tally.rejected, 1000);
}

}  // namespace
}  // namespace aotfuzz::ir

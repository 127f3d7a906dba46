// Unit tests for the Relay text form (printer and parser) and the DOT export.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "ir/dot.h"
#include "ir/error.h"
#include "ir/module.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/rng.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"
#include "tests/support/files.h"

namespace aotfuzz::ir {
namespace {

namespace fs = std::filesystem;

const std::string kCc = "ccompiler";

using test_support::conformance_files;
using test_support::read_text;

fs::path corpus_dir() { return test_support::source_path("corpus"); }

Type tensor(std::vector<std::int64_t> shape, DType dtype = DType::kFloat32) {
  return TypeNode::tensor(std::move(shape), dtype);
}

// print→parse gives the same module and print→parse→print gives the same text, with and
// without type comments.
void expect_round_trip(const Module& m) {
  for (bool types : {false, true}) {
    PrintOptions opts;
    opts.type_comments = types;
    const std::string text = print_module(m, opts);
    Module back = parse_module(text, "roundtrip.relay");
    EXPECT_TRUE(structural_equal(back, m)) << text;
    EXPECT_EQ(print_module(back, opts), text);
  }
}

// Line and column (1-based) of the first occurrence of `needle` in `text`.
std::pair<int, int> where(std::string_view text, std::string_view needle) {
  const std::size_t at = text.find(needle);
  EXPECT_NE(at, std::string_view::npos) << "marker " << needle << " not in test text";
  int line = 1;
  int col = 1;
  for (std::size_t i = 0; i < at && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      col = 1;
    } else {
      ++col;
    }
  }
  return {line, col};
}

// Parsing `text` fails at the first occurrence of `marker` (or at `pos` if given) with a message
// in the `file:line:col: error: ` form that contains `needle`.
void expect_error_at(std::string_view text, std::pair<int, int> pos, const std::string& needle) {
  try {
    parse_module(text, "bad.relay");
    ADD_FAILURE() << "no ParseError for:\n" << text;
  } catch (const ParseError& e) {
    const std::string what = e.what();
    EXPECT_EQ(e.file(), "bad.relay");
    EXPECT_EQ(e.line(), pos.first) << what;
    EXPECT_EQ(e.col(), pos.second) << what;
    const std::string prefix =
        "bad.relay:" + std::to_string(pos.first) + ":" + std::to_string(pos.second) + ": error: ";
    EXPECT_EQ(what.rfind(prefix, 0), 0u) << what;
    EXPECT_NE(what.find(needle), std::string::npos) << what;
  }
}
void expect_error_at(std::string_view text, std::string_view marker, const std::string& needle) {
  expect_error_at(text, where(text, marker), needle);
}

// The annotated graph of TVM issue #9036, built as the issue's Python builds it.
Module seed_annotated() {
  auto x = VarNode::make("x", tensor({10, 10}));
  auto w0 = VarNode::make("w0", tensor({10, 10}));
  auto w1 = VarNode::make("w1", tensor({10, 10}));
  Expr z0 = compiler_end(
      CallNode::make(Op::kAdd, {compiler_begin(x, kCc), compiler_begin(w0, kCc)}), kCc);
  Expr z1 = compiler_end(
      CallNode::make(Op::kAdd, {compiler_begin(z0, kCc), compiler_begin(w1, kCc)}), kCc);
  Module m;
  m.add("main", FunctionNode::make({x, w0, w1}, CallNode::make(Op::kAdd, {z0, z1})));
  return m;
}

// The same graph written as Relay text (docs/design.md, "The IR and its text form").
const char* const kSeedAnnotatedText = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(10, 10), float32], %w0: Tensor[(10, 10), float32], %w1: Tensor[(10, 10), float32]) {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = annotation.compiler_begin(%w0, compiler="ccompiler");
  %2 = add(%0, %1);
  %3 = annotation.compiler_end(%2, compiler="ccompiler");
  %4 = annotation.compiler_begin(%3, compiler="ccompiler");
  %5 = annotation.compiler_begin(%w1, compiler="ccompiler");
  %6 = add(%4, %5);
  %7 = annotation.compiler_end(%6, compiler="ccompiler");
  add(%3, %7)
}
)";

// The "Relay model after partitioning" listing quoted in the seed issue.
std::string seed_partitioned_listing() {
  const std::string text = read_text(corpus_dir() / "seed" / "tvm-9036-aot-multi-output-bug.txt");
  std::size_t start = text.find("Relay model after partitioning:");
  EXPECT_NE(start, std::string::npos);
  start = text.find("def @main", start);
  EXPECT_NE(start, std::string::npos);
  const std::size_t end = text.find("This is the incorrectly generated", start);
  EXPECT_NE(end, std::string::npos);
  return text.substr(start, end - start);
}

// The module of the format example in the task brief: tuple, projection, a Primitive local
// function taking a tuple, and a call of another def that is defined later.
Module brief_example() {
  auto x = VarNode::make("x", tensor({10, 10}));
  auto w0 = VarNode::make("w0", tensor({10, 10}));
  Expr b = compiler_begin(x, kCc);
  Expr a1 = CallNode::make(Op::kAdd, {b, w0});
  Expr t = TupleNode::make({a1, b});
  Expr g = TupleGetItemNode::make(t, 1);
  auto p0 = VarNode::make("p0", t->type());
  Expr p00 = TupleGetItemNode::make(p0, 0);
  auto fn = FunctionNode::make({p0}, CallNode::make(Op::kAdd, {p00, p00}), Attrs{{"Primitive", 1}});
  Expr call = CallNode::make(fn, {t});
  auto a = VarNode::make("a", tensor({10, 10}));
  auto bb = VarNode::make("b", tensor({10, 10}));
  auto other = FunctionNode::make({a, bb}, CallNode::make(Op::kAdd, {a, bb}),
                                  Attrs{{"Inline", 1},
                                        {"Compiler", kCc},
                                        {"global_symbol", std::string("other")},
                                        {"Primitive", 1}});
  Module m;
  m.add("main",
        FunctionNode::make({x, w0},
                           CallNode::make(GlobalVarNode::make("other", other->type()), {call, g})));
  m.add("other", other);
  return m;
}

// ---------------------------------------------------------------- printer

TEST(Parser, ALeadingUtf8ByteOrderMarkIsNoCharacterOfTheText) {
  const std::string text = "def @main(%x: Tensor[(2), float32]) {\n  add(%x, %x)\n}\n";
  EXPECT_EQ(print_module(parse_module("\xEF\xBB\xBF" + text, "bom.relay")),
            print_module(parse_module(text, "plain.relay")));
  // Anywhere else it is still an unexpected character.
  EXPECT_THROW(parse_module(text + "\xEF\xBB\xBF", "late.relay"), ParseError);
}

TEST(Printer, PrintsTheSeedGraphAsTheDesignListingWithItsReturnType) {
  std::string expected = kSeedAnnotatedText;
  const std::string open = "float32]) {";
  expected.replace(expected.find(open), open.size(), "float32]) -> Tensor[(10, 10), float32] {");
  EXPECT_EQ(print_module(seed_annotated()), expected);
}

TEST(Printer, PrintsTuplesProjectionsLocalFunctionsAndAttributesInTheDocumentedLayout) {
  const std::string expected = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(10, 10), float32], %w0: Tensor[(10, 10), float32]) -> Tensor[(10, 10), float32] {
  %0 = annotation.compiler_begin(%x, compiler="ccompiler");
  %1 = add(%0, %w0);
  %2 = (%1, %0);
  %3 = fn (%p0: (Tensor[(10, 10), float32], Tensor[(10, 10), float32]), Primitive=1) -> Tensor[(10, 10), float32] {
    %4 = %p0.0;
    add(%4, %4)
  };
  %5 = %3(%2);
  %6 = %2.1;
  @other(%5, %6)
}

def @other(%a: Tensor[(10, 10), float32], %b: Tensor[(10, 10), float32], Inline=1, Compiler="ccompiler", global_symbol="other", Primitive=1) -> Tensor[(10, 10), float32] {
  add(%a, %b)
}
)";
  EXPECT_EQ(print_module(brief_example()), expected);
  expect_round_trip(brief_example());
}

TEST(Printer, TypeCommentsFollowEveryBoundValueAndEveryResult) {
  PrintOptions opts;
  opts.type_comments = true;
  const std::string text = print_module(brief_example(), opts);
  std::istringstream lines(text);
  std::string line;
  int bindings = 0;
  int results = 0;
  while (std::getline(lines, line)) {
    if (line.find(" = fn (") != std::string::npos || line.rfind("def ", 0) == 0 ||
        line.rfind("#[", 0) == 0 || line.empty()) {
      continue;
    }
    if (line.back() == ';') {
      ++bindings;
      EXPECT_NE(line.find(" /* ty="), std::string::npos) << line;
      EXPECT_EQ(line.substr(line.size() - 4), " */;") << line;
    } else if (line != "}") {
      ++results;
      EXPECT_NE(line.find(" /* ty="), std::string::npos) << line;
    }
  }
  EXPECT_EQ(bindings, 7);  // %0..%6, the fn's closing line included
  EXPECT_EQ(results, 3);   // main, the local fn, @other
  EXPECT_NE(
      text.find("%2 = (%1, %0) /* ty=(Tensor[(10, 10), float32], Tensor[(10, 10), float32]) */;"),
      std::string::npos);
  EXPECT_TRUE(structural_equal(parse_module(text), brief_example()));
}

TEST(Printer, RenamesAParameterThatWouldShadowAnEnclosingOneAndReadsItBack) {
  auto outer = VarNode::make("p0", tensor({4}));
  auto inner = VarNode::make("p0", tensor({4}));
  auto fn = FunctionNode::make({inner}, CallNode::make(Op::kAdd, {inner, inner}));
  Module m;
  m.add("main", FunctionNode::make({outer}, CallNode::make(fn, {outer})));
  const std::string text = print_module(m);
  EXPECT_NE(text.find("fn (%p0_1: "), std::string::npos) << text;
  expect_round_trip(m);
}

TEST(Printer, SiblingLocalFunctionsKeepTheirCommonParameterNames) {
  auto x = VarNode::make("x", tensor({4}));
  auto p = VarNode::make("p0", tensor({4}));
  auto q = VarNode::make("p0", tensor({4}));
  auto f1 = FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, p}), Attrs{{"Primitive", 1}});
  auto f2 = FunctionNode::make({q}, CallNode::make(Op::kMultiply, {q, q}), Attrs{{"Primitive", 1}});
  Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(f2, {CallNode::make(f1, {x})})));
  const std::string text = print_module(m);
  std::size_t first = text.find("fn (%p0: ");
  ASSERT_NE(first, std::string::npos) << text;
  EXPECT_NE(text.find("fn (%p0: ", first + 1), std::string::npos) << text;
  EXPECT_EQ(text.find("p0_"), std::string::npos) << text;
  expect_round_trip(m);
}

TEST(Printer, NonIdentifierParameterNamesPrintQuotedAndReadBackUnchanged) {
  auto a = VarNode::make("input::-1", tensor({2}));
  auto b = VarNode::make("my var", tensor({2}));
  auto c = VarNode::make("plain", tensor({2}));
  Module m;
  m.add("main", FunctionNode::make(
                    {a, b, c}, CallNode::make(Op::kAdd, {CallNode::make(Op::kAdd, {a, b}), c})));
  const std::string text = print_module(m);
  EXPECT_NE(text.find("(%\"input::-1\": "), std::string::npos) << text;
  EXPECT_NE(text.find("%\"my var\": "), std::string::npos) << text;
  EXPECT_NE(text.find("%plain: "), std::string::npos) << text;
  EXPECT_NE(text.find("add(%\"input::-1\", %\"my var\")"), std::string::npos) << text;
  const Module back = parse_module(text);
  ASSERT_EQ(back.main()->params().size(), 3u);
  EXPECT_EQ(back.main()->params()[0]->name(), "input::-1");
  EXPECT_EQ(back.main()->params()[1]->name(), "my var");
  EXPECT_TRUE(structural_equal(back, m));
  expect_round_trip(m);
}

TEST(Printer, NamesNoQuotedSpellingCarriesAreSanitizedSoTheTextReadsBack) {
  // Unverified modules only: verify() refuses these names.
  auto a = VarNode::make("0", tensor({2}));
  auto b = VarNode::make("back\\slash", tensor({2}));
  auto c = VarNode::make("", tensor({2}));
  Module m;
  m.add("main", FunctionNode::make(
                    {a, b, c}, CallNode::make(Op::kAdd, {CallNode::make(Op::kAdd, {a, b}), c})));
  const std::string text = print_module(m);
  EXPECT_NE(text.find("%v0: "), std::string::npos) << text;
  EXPECT_NE(text.find("%back_slash: "), std::string::npos) << text;
  expect_round_trip(m);
}

TEST(Parser, AQuotedNameAndTheBareSpellingOfTheSameIdentifierAreOneVariable) {
  const Module m = parse_module("def @main(%\"x\": float32) { add(%x, %\"x\") }");
  EXPECT_EQ(m.main()->params()[0]->name(), "x");
  EXPECT_NE(print_module(m).find("add(%x, %x)"), std::string::npos) << print_module(m);
}

TEST(Printer, StringAttributesAreEscapedAndReadBackExactly) {
  const std::string weird = std::string("a\"b\\c\nd\te\x01\xff\0", 12);  // NUL included
  auto x = VarNode::make("x", tensor({2}));
  Module m;
  m.add("main", FunctionNode::make({x}, compiler_end(compiler_begin(x, weird), weird),
                                   Attrs{{"global_symbol", weird}, {"Neg", std::int64_t{-7}}}));
  const std::string text = print_module(m);
  EXPECT_NE(text.find(R"("a\"b\\c\nd\te\x01\xff\x00")"), std::string::npos) << text;
  EXPECT_NE(text.find("Neg=-7"), std::string::npos) << text;
  Module back = parse_module(text);
  EXPECT_EQ(back.main()->attrs().get_string("global_symbol"), weird);
  expect_round_trip(m);
}

TEST(Printer, PrintExprShowsBindingsThenTheResult) {
  auto x = VarNode::make("x", tensor({3}));
  Expr a = CallNode::make(Op::kAdd, {x, x});
  Expr e = TupleNode::make({CallNode::make(Op::kSubtract, {a, a})});
  EXPECT_EQ(print_expr(e), "%0 = add(%x, %x);\n%1 = subtract(%0, %0);\n(%1,)");
  auto fn = FunctionNode::make({x}, a);
  EXPECT_EQ(print_expr(fn),
            "fn (%x: Tensor[(3), float32]) -> Tensor[(3), float32] {\n  add(%x, %x)\n}");
  EXPECT_EQ(print_expr(x), "%x");
}

TEST(Printer, OutputDoesNotDependOnNodeAddresses) {
  // Two independently built copies print identically, with and without type comments.
  for (bool types : {false, true}) {
    PrintOptions opts;
    opts.type_comments = types;
    EXPECT_EQ(print_module(brief_example(), opts), print_module(brief_example(), opts));
  }
}

// ---------------------------------------------------------------- parser: accepted input

TEST(Parser, ParsesThePartitionedModuleQuotedInTheSeedIssue) {
  const std::string listing = seed_partitioned_listing();
  Module m = parse_module(listing, "seed.txt");
  EXPECT_NO_THROW(verify(m));
  ASSERT_EQ(m.size(), 2u);
  EXPECT_EQ(m.functions()[0].first, "main");
  EXPECT_EQ(m.functions()[1].first, "tvmgen_mod_name_ccompiler_main_0");
  // main: add(%0.0, %0.1) over one call of the outlined function.
  const auto* add = as<CallNode>(m.main()->body());
  ASSERT_NE(add, nullptr);
  EXPECT_TRUE(add->is_op(Op::kAdd));
  const auto* t0 = as<TupleGetItemNode>(add->args()[0]);
  const auto* t1 = as<TupleGetItemNode>(add->args()[1]);
  ASSERT_TRUE(t0 && t1);
  EXPECT_EQ(t0->index(), 0);
  EXPECT_EQ(t1->index(), 1);
  EXPECT_EQ(t0->tuple(), t1->tuple());
  const auto* call = as<CallNode>(t0->tuple());
  ASSERT_NE(call, nullptr);
  ASSERT_NE(as<GlobalVarNode>(call->callee()), nullptr);
  EXPECT_EQ(as<GlobalVarNode>(call->callee())->name(), "tvmgen_mod_name_ccompiler_main_0");
  const Function& ext = *m.find("tvmgen_mod_name_ccompiler_main_0");
  EXPECT_EQ(ext->params().size(), 3u);
  EXPECT_EQ(ext->attrs(), (Attrs{{"Inline", 1},
                                 {"Compiler", kCc},
                                 {"global_symbol", std::string("tvmgen_mod_name_ccompiler_main_0")},
                                 {"Primitive", 1}}));
  EXPECT_EQ(type_to_string(ext->ret_type()),
            "(Tensor[(10, 10), float32], Tensor[(10, 10), float32])");
  expect_round_trip(m);
}

TEST(Parser, ParsesTheAnnotatedGraphOfTheSeedIssueAsTheConformanceFileHasIt) {
  Module written = parse_module(kSeedAnnotatedText);
  Module file = parse_module(read_text(corpus_dir() / "conformance" / "seed_9036_merge.relay"));
  EXPECT_TRUE(structural_equal(written, seed_annotated()));
  EXPECT_TRUE(structural_equal(file, seed_annotated()));
  EXPECT_NO_THROW(verify(written));
  // The same graph with nested calls instead of bindings.
  Module inline_form = parse_module(R"(
def @main(%x: Tensor[(10, 10), float32], %w0: Tensor[(10, 10), float32], %w1: Tensor[(10, 10), float32]) {
  %z0 = annotation.compiler_end(add(annotation.compiler_begin(%x, compiler="ccompiler"),
                                    annotation.compiler_begin(%w0, compiler="ccompiler")), compiler="ccompiler");
  add(%z0, annotation.compiler_end(add(annotation.compiler_begin(%z0, compiler="ccompiler"),
                                       annotation.compiler_begin(%w1, compiler="ccompiler")), compiler="ccompiler"))
})");
  EXPECT_TRUE(structural_equal(inline_form, seed_annotated()));
}

TEST(Parser, EveryConformanceGraphParsesVerifiesAndRoundTrips) {
  const auto files = conformance_files();
  EXPECT_GE(files.size(), 5u);
  for (const auto& path : files) {
    SCOPED_TRACE(path.string());
    Module m = parse_module(read_text(path), path.string());
    EXPECT_NO_THROW(verify(m));
    EXPECT_GE(m.size(), 1u);
    expect_round_trip(m);
  }
}

TEST(Parser, HandBuiltModulesRoundTripStructurally) {
  std::vector<Module> modules;
  {  // nested tuples, a 1-tuple and an empty tuple, projections of projections
    auto a = VarNode::make("a", tensor({2, 3}));
    auto b = VarNode::make("b", tensor({3}));
    Expr inner = TupleNode::make({a, TupleNode::make({b})});
    Expr outer = TupleNode::make({inner, TupleNode::make({}), a});
    Expr deep =
        TupleGetItemNode::make(TupleGetItemNode::make(TupleGetItemNode::make(outer, 0), 1), 0);
    Module m;
    m.add("main", FunctionNode::make(
                      {a, b}, TupleNode::make({CallNode::make(Op::kAdd, {a, deep}), outer})));
    modules.push_back(m);
  }
  {  // int8 and int32 tensors, rank 0 and broadcasting
    auto i8 = VarNode::make("i8", tensor({4, 1}, DType::kInt8));
    auto j8 = VarNode::make("j8", tensor({5}, DType::kInt8));
    auto s32 = VarNode::make("s", tensor({}, DType::kInt32));
    auto v32 = VarNode::make("v", tensor({2, 1, 3}, DType::kInt32));
    Expr m8 = CallNode::make(Op::kMultiply, {i8, j8});
    Expr m32 = CallNode::make(Op::kSubtract, {s32, v32});
    Module m;
    m.add("main", FunctionNode::make({i8, j8, s32, v32}, TupleNode::make({m8, m32})));
    EXPECT_EQ(type_to_string(m8->type()), "Tensor[(4, 5), int8]");
    modules.push_back(m);
  }
  {  // several functions calling each other, callers first; nested local functions
    auto p = VarNode::make("p", tensor({2}));
    auto leaf = FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, p}), Attrs{{"Compiler", kCc}});
    auto q = VarNode::make("q", tensor({2}));
    auto r = VarNode::make("r", tensor({2}));
    auto inner =
        FunctionNode::make({r}, CallNode::make(Op::kMultiply, {r, r}), Attrs{{"Primitive", 1}});
    auto outer_fn = FunctionNode::make(
        {q},
        CallNode::make(inner, {CallNode::make(GlobalVarNode::make("leaf", leaf->type()), {q})}));
    auto m0 = VarNode::make("m0", tensor({2}));
    auto mid = FunctionNode::make({m0}, CallNode::make(outer_fn, {m0}));
    auto x = VarNode::make("x", tensor({2}));
    auto main = FunctionNode::make(
        {x}, CallNode::make(GlobalVarNode::make("mid", mid->type()),
                            {CallNode::make(GlobalVarNode::make("leaf", leaf->type()), {x})}));
    Module m;
    m.add("main", main);
    m.add("mid", mid);
    m.add("leaf", leaf);
    EXPECT_NO_THROW(verify(m));
    modules.push_back(m);
  }
  {  // a function with no parameters and attributes only; a body that is a parameter
    auto x = VarNode::make("x", tensor({}));
    auto unit = FunctionNode::make({}, TupleNode::make({}), Attrs{{"Inline", 1}});
    Module m;
    m.add("main", FunctionNode::make({x}, x));
    m.add("unit", unit);
    modules.push_back(m);
  }
  modules.push_back(seed_annotated());
  modules.push_back(brief_example());
  for (const auto& m : modules) {
    SCOPED_TRACE(print_module(m));
    expect_round_trip(m);
  }
}

TEST(Parser, AcceptsTvmAndHandWrittenVariants) {
  const std::string text = R"(// a corpus header comment
def @main(%a: Tensor[(10,), float32] /* trailing comma */, %b: Tensor[(10), float32],
          %s: float32, %e: Tensor[(), float32], %i: int32, %k: int8) {
  /* a comment /* nested */ still a comment */
  %t = (%a, (%b,), ((%a)));
  %0 = %t.1.0;                         // projection chain
  %u = (%t).0;                         // projection of a parenthesised expression
  %f = fn (%p0: (Tensor[(10), float32], (Tensor[(10), float32],), Tensor[(10), float32]),
           Primitive=1) -> Tensor[(10), float32] {
    add(%p0.0, %p0.2)
  };
  %1 = %f(%t);
  %2 = fn (%q: Tensor[(10), float32]) { multiply(%q, %q) }(%1);
  (add(%0, %u), %2, add(%s, %e), %i, %k)
})";
  Module m = parse_module(text);
  EXPECT_NO_THROW(verify(m));
  const Function& main = m.main();
  EXPECT_EQ(type_to_string(main->params()[1]->type()), "Tensor[(10), float32]");
  EXPECT_EQ(type_to_string(main->params()[3]->type()), "float32");
  EXPECT_EQ(type_to_string(main->ret_type()),
            "(Tensor[(10), float32], Tensor[(10), float32], float32, int32, int8)");
  // %t.1.0 is %b, so the first result is add(%b, %a).
  const auto* res = as<TupleNode>(main->body());
  ASSERT_NE(res, nullptr);
  const auto* add = as<CallNode>(res->fields()[0]);
  ASSERT_NE(add, nullptr);
  const auto* proj = as<TupleGetItemNode>(add->args()[0]);
  ASSERT_NE(proj, nullptr);
  EXPECT_EQ(proj->index(), 0);
  // Both local functions are called: one bound and called by name, one called in place.
  int local_calls = 0;
  for (const auto& n : post_order(main->body())) {
    if (const auto* c = as<CallNode>(n); c && as<FunctionNode>(c->callee())) ++local_calls;
  }
  EXPECT_EQ(local_calls, 2);
  expect_round_trip(m);
}

TEST(Parser, DefinitionsMayReferToEachOtherInAnyOrder) {
  Module m = parse_module(R"(
def @main(%x: Tensor[(3), float32]) { @b(@a(%x)) }
def @b(%y: Tensor[(3), float32]) { @c(%y, %y) }
def @a(%z: Tensor[(3), float32]) -> Tensor[(3), float32] { @c(%z, %z) }
def @c(%p: Tensor[(3), float32], %q: Tensor[(3), float32]) { add(%p, %q) }
)");
  ASSERT_EQ(m.size(), 4u);
  EXPECT_EQ(m.functions()[0].first, "main");
  EXPECT_EQ(m.functions()[1].first, "b");
  EXPECT_EQ(m.functions()[2].first, "a");
  EXPECT_EQ(m.functions()[3].first, "c");
  EXPECT_NO_THROW(verify(m));
  expect_round_trip(m);
}

TEST(Parser, BindingsKeepSharingAndLocalBindingsStayInsideTheirFunction) {
  Module m = parse_module(R"(
def @main(%x: Tensor[(3), float32]) {
  %shared = add(%x, %x);
  %f = fn (%p: Tensor[(3), float32]) { %in = add(%p, %p); %in };
  %g = fn (%p: Tensor[(3), float32]) { %in = multiply(%p, %p); %in };
  add(%f(%shared), %g(%shared))
})");
  const auto* root = as<CallNode>(m.main()->body());
  ASSERT_NE(root, nullptr);
  const auto* c0 = as<CallNode>(root->args()[0]);
  const auto* c1 = as<CallNode>(root->args()[1]);
  ASSERT_TRUE(c0 && c1);
  EXPECT_EQ(c0->args()[0], c1->args()[0]);  // one node, not two copies
  expect_error_at(
      "def @main(%x: float32) {\n  %f = fn (%p: float32) { %in = add(%p, %p); %in };\n  %in\n}",
      "%in\n}", "undefined variable %in");
}

TEST(Parser, AHundredThousandNodeChainParsesPrintsAndRoundTrips) {
  constexpr int kNodes = 100000;
  std::string text =
      "#[version = \"0.0.5\"]\ndef @main(%x: Tensor[(2), float32]) -> Tensor[(2), float32] {\n"
      "  %0 = add(%x, %x);\n";
  for (int i = 1; i < kNodes - 1; ++i) {
    text += "  %" + std::to_string(i) + " = add(%" + std::to_string(i - 1) + ", %x);\n";
  }
  text += "  add(%" + std::to_string(kNodes - 2) + ", %x)\n}\n";
  Module m = parse_module(text);
  EXPECT_EQ(post_order(m.main()->body()).size(), static_cast<std::size_t>(kNodes) + 1);  // + %x
  const std::string printed = print_module(m);
  EXPECT_EQ(printed, text);  // the text was written in canonical form
  EXPECT_TRUE(structural_equal(parse_module(printed), m));
}

TEST(Parser, NestingBelowTheLimitParsesAndDeeperNestingIsAnError) {
  auto nested = [](int depth) {
    std::string s = "def @main(%x: float32) {\n  ";
    for (int i = 0; i < depth; ++i) s += "add(";
    s += "%x";
    for (int i = 0; i < depth; ++i) s += ", %x)";
    return s + "\n}";
  };
  Module ok = parse_module(nested(200));
  EXPECT_EQ(post_order(ok.main()->body()).size(), 201u);
  expect_error_at(nested(100000), std::pair{2, 3 + 4 * kMaxParseDepth}, "nesting deeper than");
  std::string fns = "def @main(%x: float32) {\n  ";
  for (int i = 0; i < 1000; ++i) fns += "fn () {";
  expect_error_at(fns, std::pair{2, 3 + 7 * kMaxParseDepth}, "nesting deeper than");
  std::string types = "def @main(%x: ";
  for (int i = 0; i < 100000; ++i) types += "(";
  EXPECT_THROW(parse_module(types), ParseError);
}

// ---------------------------------------------------------------- parser: errors

TEST(Parser, ConstantsRoundTripWithTheirTypeValuesAndSharing) {
  const std::string text = R"(#[version = "0.0.5"]
def @main(%x: Tensor[(2, 2), int8]) -> (Tensor[(2, 2), int8], int32, float32) {
  %0 = const(Tensor[(2), int8], [-128, 127]);
  %1 = add(%x, %0);
  %2 = add(%1, %0);
  %3 = const(int32, [-2147483648]);
  %4 = const(float32, [16777216]);
  (%2, %3, %4)
}
)";
  const Module m = parse_module(text);
  verify(m);
  EXPECT_EQ(print_module(m), text);
  expect_round_trip(m);
  // One constant node read twice stays one node.
  const auto* outer = as<CallNode>(as<TupleNode>(m.main()->body())->fields()[0]);
  const auto* inner = as<CallNode>(outer->args()[0]);
  ASSERT_NE(inner, nullptr);
  EXPECT_EQ(inner->args()[1], outer->args()[1]);
  const auto* c = as<ConstantNode>(outer->args()[1]);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(c->values(), (std::vector<std::int64_t>{-128, 127}));
}

TEST(Structural, ConstantsAreEqualOnlyWithEqualTypesAndValues) {
  const Type t = tensor({2});
  const Expr a = ConstantNode::make(t, {1, 2});
  EXPECT_TRUE(structural_equal(a, ConstantNode::make(t, {1, 2})));
  EXPECT_EQ(structural_hash(a), structural_hash(ConstantNode::make(t, {1, 2})));
  EXPECT_FALSE(structural_equal(a, ConstantNode::make(t, {2, 1})));
  EXPECT_NE(structural_hash(a), structural_hash(ConstantNode::make(t, {2, 1})));
  EXPECT_FALSE(structural_equal(a, ConstantNode::make(tensor({2}, DType::kInt32), {1, 2})));
}

TEST(ParserErrors, ConstantsWithValuesTheirDtypeCannotHoldExactlyAreReportedAtTheConstant) {
  expect_error_at("def @main() {\n  const(Tensor[(2), int8], [1, 128])\n}", "const(",
                  "constant value 128 is not an exact int8");
  expect_error_at("def @main() {\n  const(float32, [16777217])\n}", "const(",
                  "not an exact float32");
  expect_error_at("def @main() {\n  const(Tensor[(3), int32], [1, 2])\n}", "const(",
                  "needs 3 values, got 2");
  expect_error_at("def @main() {\n  const(Tensor[(1), float32], [1.5])\n}", ".5",
                  "',' or ']' in the constant's values (whole numbers, for float dtypes too)");
  expect_error_at("def @main() {\n  const(Tensor[(1), float32], [.5])\n}", ".5",
                  "a whole number or ']' (constant values are whole numbers, for float dtypes");
  expect_error_at("def @main() {\n  const((float32, float32), [1, 2])\n}", "const(", "tensor type");
}

TEST(ParserErrors, TruncatedInputIsReportedAtTheEndWithWhatWasExpected) {
  const std::string full = read_text(corpus_dir() / "conformance" / "single_op.relay");
  const std::string cut = full.substr(0, full.find("add(%0, %1)") + 7);  // "...add(%0,"
  const std::size_t last_nl = cut.rfind('\n');
  const int line = static_cast<int>(std::count(cut.begin(), cut.end(), '\n')) + 1;
  const int col = static_cast<int>(cut.size() - last_nl);
  expect_error_at(cut, std::pair{line, col}, "expected an expression, found end of input");
  expect_error_at("def @main(%x: float32) {\n  %x", std::pair{2, 5}, "expected '}'");
  expect_error_at("def @main(%x: Tensor[(2", std::pair{1, 24}, "expected ',' or ')'");
  expect_error_at("def", std::pair{1, 4}, "expected a function name");
}

TEST(ParserErrors, AnUnclosedDefIsReportedAtTheNextDefNotAsRecursion) {
  const std::string text =
      "def @main(%x: float32) {\n  %x\n\ndef @f(%y: float32) {\n  @main(%y)\n}\n";
  expect_error_at(text, "def @f", "expected '}' to close the body of @main, found 'def'");
  expect_error_at("def @main(%x: float32)\ndef @f(%y: float32) { %y }", "def @f",
                  "expected '{' to open the body of @main");
}

TEST(ParserErrors, AnUnknownOperatorIsReportedAtItsName) {
  expect_error_at("def @main(%x: float32) {\n  %0 = nn.conv2d(%x, %x);\n  %0\n}", "nn.conv2d",
                  "unknown operator 'nn.conv2d'");
}

TEST(ParserErrors, AnUnknownDtypeIsReportedAtTheDtype) {
  expect_error_at("def @main(%x: Tensor[(2, 2), float64]) {\n  %x\n}", "float64",
                  "unknown dtype 'float64'");
  expect_error_at("def @main(%x: float16) {\n  %x\n}", "float16",
                  "unknown type or dtype 'float16'");
}

TEST(ParserErrors, AnAnnotationWithoutItsCompilerAttributeIsReportedAtTheCall) {
  const std::string text =
      "def @main(%x: float32) {\n  %0 = annotation.compiler_begin(%x);\n  %0\n}";
  expect_error_at(text, "annotation.", "compiler");
  expect_error_at("def @main(%x: float32) {\n  annotation.compiler_end(%x, target=\"a\")\n}",
                  "annotation.", "compiler");
  expect_error_at("def @main(%x: float32) {\n  add(%x, %x, compiler=\"a\")\n}", "add(",
                  "no attributes");
}

TEST(ParserErrors, TypeMismatchesAreReportedAtTheOffendingConstruct) {
  expect_error_at(
      "def @main(%a: Tensor[(2, 3), float32], %b: Tensor[(4), float32]) {\n  %0 = add(%a, %b);\n  "
      "%0\n}",
      "add(", "broadcast");
  expect_error_at("def @main(%a: float32, %b: int32) {\n  add(%a, %b)\n}", "add(",
                  "dtype mismatch");
  expect_error_at("def @main(%a: float32) {\n  %t = (%a, %a);\n  %t.2\n}", ".2", "out of range");
  expect_error_at("def @main(%a: float32) {\n  %a.0\n}", ".0", "non-tuple");
  expect_error_at("def @main(%a: float32) -> int32 {\n  %a\n}", "int32", "declared to return");
  expect_error_at("def @main(%a: float32) {\n  add(%a)\n}", "add(", "takes 2 arguments");
  expect_error_at("def @main(%a: float32) {\n  @f(%a, %a)\n}\ndef @f(%b: float32) {\n  %b\n}",
                  "@f(%a", "takes 1 arguments");
  expect_error_at("def @main(%a: float32) {\n  %t = (%a,);\n  %t(%a)\n}", "%t(%a)",
                  "not a function");
}

TEST(ParserErrors, UndefinedNamesAreReportedWhereTheyAreUsed) {
  expect_error_at("def @main(%a: float32) {\n  %0 = add(%a, %zz);\n  %0\n}", "%zz",
                  "undefined variable %zz");
  expect_error_at("def @main(%a: float32) {\n  @nope(%a)\n}", "@nope", "undefined function @nope");
  expect_error_at("def @main(%a: float32) {\n  %0 = add(%0, %a);\n  %0\n}", "%0, %a",
                  "undefined variable %0");
}

TEST(ParserErrors, RecursionIsReportedAtTheDefThatClosesTheCycle) {
  const std::string two =
      "def @main(%a: float32) {\n  @f(%a)\n}\n\ndef @f(%b: float32) {\n  @main(%b)\n}\n";
  expect_error_at(two, std::pair{1, 1}, "recursive call cycle @main -> @f -> @main");
  const std::string self = "def @main(%a: float32) {\n  %a\n}\ndef @g(%a: float32) {\n  @g(%a)\n}";
  expect_error_at(self, "def @g", "recursive call cycle @g -> @g");
}

TEST(ParserErrors, GarbageBytesAreReportedAtTheFirstBadByte) {
  expect_error_at(std::string("def @main(%x: float32) {\n  \x01\xff%x\n}"), std::pair{2, 3},
                  "unexpected character '\\x01'");
  expect_error_at(std::string("\x7f"
                              "ELF\x02\x01\x01",
                              7),
                  std::pair{1, 1}, "unexpected character");
  expect_error_at("def @main(%x: float32) {\n  %x $\n}", "$", "unexpected character '$'");
  expect_error_at("/* never closed", std::pair{1, 1}, "unterminated comment");
  expect_error_at("def @main(%x: float32, A=\"abc", "\"abc", "unterminated string");
  expect_error_at("def @main(%x: float32, A=\"a\\q\") { %x }", "\\q", "unknown escape");
  expect_error_at("hello", "hello", "expected 'def'");
}

TEST(ParserErrors, QuotedNamesHoldPrintableAsciiWithoutEscapesAndEndOnTheirLine) {
  expect_error_at("def @main(%\"a\\b\": float32) { %x }", "\\b", "printable ASCII other than");
  expect_error_at("def @main(%\"ab\ncd\": float32) { %x }", std::pair{1, 15},
                  "printable ASCII other than");
  expect_error_at("def @main(%\"\": float32) { %x }", "%\"\"", "empty quoted name");
  expect_error_at("def @main(%\"never closed", "%\"never", "unterminated quoted name");
  expect_error_at("def @main(%\"a b\": float32) { %\"a c\" }", "%\"a c\"",
                  "undefined variable %a c");
}

TEST(ParserErrors, RedefinitionsAndShadowingAreErrors) {
  expect_error_at("def @main(%x: float32) {\n  %x = add(%x, %x);\n  %x\n}",
                  "%x = ", "redefinition of %x");
  expect_error_at("def @main(%x: float32, %x: float32) {\n  %x\n}", "%x: float32) ",
                  "redefinition of %x");
  expect_error_at("def @main(%x: float32) {\n  fn (%x: float32) { %x }(%x)\n}", std::pair{2, 7},
                  "shadowing");
  expect_error_at("def @main(%x: float32) { %x }\ndef @main(%y: float32) { %y }", "def @main(%y",
                  "redefinition of @main");
  expect_error_at("def @main(%x: float32, A=1, A=2) { %x }", "A=2", "duplicate attribute");
}

TEST(ParserErrors, MalformedSyntaxSaysWhatWasExpected) {
  expect_error_at("def @main(%x) {\n  %x\n}", ")", "':' and a type");
  expect_error_at("def @main(A=1, %x: float32) { %x }", "%x",
                  "parameters must come before attributes");
  expect_error_at("def @main(%x: float32) {\n  %0 = add(%x, %x)\n  %0\n}", "%0\n}", "expected ';'");
  expect_error_at("def @main(%x: float32) {\n}", "}", "expected an expression");
  expect_error_at("def @main(%x: float32) {\n  add\n}", "add", "must be called");
  expect_error_at("def @main(%x: float32) {\n  @main2(%x, A=1)\n}\ndef @main2(%y: float32) { %y }",
                  "A=1", "only operator calls take attributes");
  expect_error_at("#[version = 5]\n", "5", "expected a version string");
  expect_error_at("def @main(%x: float32, A=1.5) { %x }", ".5", "expected ',' or ')'");
}

TEST(ParserErrors, OutOfRangeNumbersAndHugeShapesAreErrors) {
  expect_error_at("def @main(%x: Tensor[(99999999999999999999999), float32]) { %x }", "99999",
                  "out of range");
  expect_error_at("def @main(%x: Tensor[(65536, 65537), float32]) { %x }", "65537",
                  "more than 2^31 elements");
  expect_error_at("def @main(%x: Tensor[(-1), float32]) { %x }", "-1", "out of range");
  expect_error_at("def @main(%x: float32, A=99999999999999999999) { %x }", "9999", "out of range");
  expect_error_at("def @main(%x: float32) {\n  (%x, %x).4294967297\n}", "4294967297",
                  "out of range");
  std::string rank = "def @main(%x: Tensor[(";
  for (int i = 0; i < 40; ++i) rank += "1, ";
  rank += "1), float32]) { %x }";
  EXPECT_THROW(parse_module(rank), ParseError);
  // Exactly 2^31 elements is still accepted as a type.
  EXPECT_NO_THROW(parse_module("def @main(%x: Tensor[(65536, 32768), int8]) { %x }"));
}

// ---------------------------------------------------------------- random round trips

// Builds random but well-typed modules: broadcasting elementwise ops over several dtypes,
// tuples, projections, annotations with odd target names, local functions and calls of other
// defs placed anywhere in the module.
class RandomModules {
 public:
  explicit RandomModules(std::uint64_t seed) : rng_(seed) {}

  Module make() {
    dtype_ = static_cast<DType>(rng_.below(3));
    std::vector<std::pair<std::string, Function>> defs;
    const int helpers = static_cast<int>(rng_.below(3));
    for (int i = 0; i < helpers; ++i)
      defs.emplace_back("helper" + std::to_string(i), function(defs));
    defs.emplace_back("main", function(defs));
    // Any order of appearance: the parser must resolve forward references.
    for (std::size_t i = defs.size(); i > 1; --i) std::swap(defs[i - 1], defs[rng_.below(i)]);
    Module m;
    for (auto& [name, fn] : defs) m.add(name, fn);
    return m;
  }

 private:
  Type shape() {
    static const std::vector<std::vector<std::int64_t>> kShapes = {{2, 3}, {3}, {1, 3}, {2, 1}, {}};
    return tensor(kShapes[rng_.below(kShapes.size())], dtype_);
  }
  Expr pick(const std::vector<Expr>& pool) { return pool[rng_.below(pool.size())]; }

  Function function(const std::vector<std::pair<std::string, Function>>& callees) {
    std::vector<Var> params;
    std::vector<Expr> tensors;
    std::vector<Expr> tuples;
    const int n = 1 + static_cast<int>(rng_.below(3));
    for (int i = 0; i < n; ++i) {
      // Often named like FuseOps parameters, to exercise renaming against local functions.
      auto v = VarNode::make(rng_.chance(0.5) ? "p" + std::to_string(i) : "in" + std::to_string(i),
                             i == 0 ? tensor({2, 3}, dtype_) : shape());
      params.push_back(v);
      tensors.push_back(v);
    }
    const int steps = 1 + static_cast<int>(rng_.below(12));
    for (int s = 0; s < steps; ++s) {
      switch (rng_.below(7)) {
        case 0:
        case 1: {
          static const Op kOps[] = {Op::kAdd, Op::kSubtract, Op::kMultiply};
          tensors.push_back(CallNode::make(kOps[rng_.below(3)], {pick(tensors), pick(tensors)}));
          break;
        }
        case 2: {
          std::vector<Expr> fields;
          const int k = static_cast<int>(rng_.below(4));
          for (int i = 0; i < k; ++i)
            fields.push_back(rng_.chance(0.2) && !tuples.empty() ? pick(tuples) : pick(tensors));
          tuples.push_back(TupleNode::make(std::move(fields)));
          break;
        }
        case 3: {
          if (tuples.empty()) break;
          Expr t = pick(tuples);
          if (t->type()->fields().empty()) break;
          Expr item =
              TupleGetItemNode::make(t, static_cast<int>(rng_.below(t->type()->fields().size())));
          (item->type()->is_tuple() ? tuples : tensors).push_back(item);
          break;
        }
        case 4: {
          static const char* kTargets[] = {"ccompiler", "default", "b\"q", "t\\x"};
          const std::string target = kTargets[rng_.below(4)];
          tensors.push_back(rng_.chance(0.5) ? compiler_begin(pick(tensors), target)
                                             : compiler_end(pick(tensors), target));
          break;
        }
        case 5: {  // a primitive local function over one value, called at once
          Expr arg = rng_.chance(0.3) && !tuples.empty() ? pick(tuples) : pick(tensors);
          auto p = VarNode::make("p0", arg->type());
          Expr body = p;
          if (p->type()->is_tensor()) {
            body = CallNode::make(Op::kAdd, {p, p});
          } else if (!p->type()->fields().empty() && p->type()->fields()[0]->is_tensor()) {
            Expr f0 = TupleGetItemNode::make(p, 0);
            body = CallNode::make(Op::kMultiply, {f0, f0});
          }
          auto fn = FunctionNode::make({p}, body, Attrs{{"Primitive", 1}});
          Expr call = CallNode::make(fn, {arg});
          (call->type()->is_tuple() ? tuples : tensors).push_back(call);
          break;
        }
        default: {  // a call of an earlier def whose parameters some values match
          if (callees.empty()) break;
          const auto& [name, callee] = callees[rng_.below(callees.size())];
          std::vector<Expr> args;
          for (const auto& p : callee->params()) {
            std::vector<Expr> fit;
            for (const auto& t : tensors) {
              if (type_equal(t->type(), p->type())) fit.push_back(t);
            }
            if (fit.empty()) break;
            args.push_back(pick(fit));
          }
          if (args.size() != callee->params().size()) break;
          Expr call = CallNode::make(GlobalVarNode::make(name, callee->type()), std::move(args));
          (call->type()->is_tuple() ? tuples : tensors).push_back(call);
          break;
        }
      }
    }
    Expr body = rng_.chance(0.3) && !tuples.empty() ? tuples.back() : tensors.back();
    Attrs attrs;
    if (rng_.chance(0.3)) attrs = attrs.with("Compiler", std::string("ccompiler"));
    if (rng_.chance(0.3)) attrs = attrs.with("Primitive", std::int64_t{1});
    return FunctionNode::make(std::move(params), body, attrs);
  }

  Rng rng_;
  DType dtype_ = DType::kFloat32;
};

TEST(RoundTrip, RandomModulesPrintParseAndPrintIdentically) {
  RandomModules gen(20240917);
  RandomModules twin(20240917);
  for (int i = 0; i < 300; ++i) {
    Module m = gen.make();
    SCOPED_TRACE(print_module(m));
    expect_round_trip(m);
    // DOT output depends on the module's structure only, not on node addresses or on whether
    // GlobalVar nodes are shared (the parser shares them, the builder does not).
    EXPECT_EQ(to_dot(twin.make()), to_dot(m));
    Module parsed = parse_module(print_module(m));
    EXPECT_EQ(to_dot(parse_module(print_module(parsed))), to_dot(parsed));
  }
}

// ---------------------------------------------------------------- DOT

std::size_t count(const std::string& hay, const std::string& needle) {
  std::size_t n = 0;
  for (std::size_t at = hay.find(needle); at != std::string::npos; at = hay.find(needle, at + 1))
    ++n;
  return n;
}

TEST(Dot, DrawsOneClusterPerRegionAndPerFunction) {
  Module nomerge =
      parse_module(read_text(corpus_dir() / "conformance" / "seed_9036_nomerge.relay"));
  const std::string dot = to_dot(nomerge);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u);
  EXPECT_EQ(count(dot, "subgraph cluster"), 3u) << dot;  // @main + two regions
  EXPECT_EQ(count(dot, "label=\"region "), 2u) << dot;
  EXPECT_NE(dot.find("label=\"@main\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("[label=\"Tensor[(10, 10), float32]\"]"), std::string::npos) << dot;
  EXPECT_EQ(count(dot, "label=\"add\""), 3u) << dot;
  EXPECT_EQ(count(dot, "annotation.compiler_begin\\nccompiler"), 4u) << dot;

  Module merge = parse_module(read_text(corpus_dir() / "conformance" / "seed_9036_merge.relay"));
  EXPECT_EQ(count(to_dot(merge), "subgraph cluster"), 3u);  // same graph, same regions

  Module partitioned = parse_module(seed_partitioned_listing());
  const std::string pdot = to_dot(partitioned);
  EXPECT_EQ(count(pdot, "subgraph cluster"), 2u) << pdot;  // @main + the outlined function
  EXPECT_NE(pdot.find("label=\"@tvmgen_mod_name_ccompiler_main_0\\nInline=1\\nCompiler=ccompiler"),
            std::string::npos)
      << pdot;
  EXPECT_EQ(count(pdot, "style=\"filled,bold\"; fillcolor="), 1u) << pdot;
}

TEST(Dot, LocalFunctionsAreNestedClusters) {
  const std::string dot = to_dot(brief_example());
  // @main, its local fn, @other.
  EXPECT_EQ(count(dot, "subgraph cluster"), 3u) << dot;
  EXPECT_EQ(count(dot, "label=\"fn\\nPrimitive=1\""), 1u) << dot;
}

TEST(Dot, InvalidAnnotationsAreDrawnWithoutRegionClusters) {
  // An end whose argument is in no region: RegionSet::build rejects it.
  Module m = parse_module(
      "def @main(%x: float32) {\n  annotation.compiler_end(%x, compiler=\"ccompiler\")\n}");
  EXPECT_THROW(verify(m), VerifyError);
  const std::string dot = to_dot(m);
  EXPECT_EQ(count(dot, "subgraph cluster"), 1u) << dot;
  EXPECT_NE(dot.find("annotation.compiler_end"), std::string::npos);
}

TEST(Dot, ColoursFollowTargetNameOrderAndOutputIsDeterministic) {
  auto colour_of = [](const std::string& dot, const std::string& target) {
    const std::size_t at = dot.find("[" + target + "]\";");
    EXPECT_NE(at, std::string::npos) << dot;
    const std::size_t fill = dot.find("fillcolor=\"", at);
    return dot.substr(fill, 20);
  };
  const std::string a_first = R"(
def @main(%x: float32) {
  %0 = annotation.compiler_end(add(annotation.compiler_begin(%x, compiler="aaa"), annotation.compiler_begin(%x, compiler="aaa")), compiler="aaa");
  %1 = annotation.compiler_end(add(annotation.compiler_begin(%x, compiler="zzz"), annotation.compiler_begin(%x, compiler="zzz")), compiler="zzz");
  add(%0, %1)
})";
  std::string z_first = a_first;
  // Swap which target appears first in the graph.
  for (auto [from, to] : {std::pair{"aaa", "tmp"}, {"zzz", "aaa"}, {"tmp", "zzz"}}) {
    for (std::size_t at = z_first.find(from); at != std::string::npos; at = z_first.find(from)) {
      z_first.replace(at, 3, to);
    }
  }
  const std::string d1 = to_dot(parse_module(a_first));
  const std::string d2 = to_dot(parse_module(z_first));
  EXPECT_EQ(colour_of(d1, "aaa"), colour_of(d2, "aaa"));
  EXPECT_EQ(colour_of(d1, "zzz"), colour_of(d2, "zzz"));
  EXPECT_NE(colour_of(d1, "aaa"), colour_of(d1, "zzz"));
  EXPECT_EQ(to_dot(parse_module(a_first)), d1);
}

}  // namespace
}  // namespace aotfuzz::ir

// Unit tests for IR construction, typing, traversal, structural equality, regions and verify.
#include <gtest/gtest.h>

#include <thread>

#include "ir/error.h"
#include "ir/module.h"
#include "ir/regions.h"
#include "ir/structural.h"
#include "ir/traversal.h"
#include "ir/verify.h"

namespace aotfuzz::ir {
namespace {

Type f32(std::vector<std::int64_t> shape) {
  return TypeNode::tensor(std::move(shape), DType::kFloat32);
}

// The annotated graph of TVM issue #9036.
Module seed_graph() {
  auto x = VarNode::make("x", f32({10, 10}));
  auto w0 = VarNode::make("w0", f32({10, 10}));
  auto w1 = VarNode::make("w1", f32({10, 10}));
  const std::string cc = "ccompiler";
  Expr z0 =
      compiler_end(CallNode::make(Op::kAdd, {compiler_begin(x, cc), compiler_begin(w0, cc)}), cc);
  Expr z1 =
      compiler_end(CallNode::make(Op::kAdd, {compiler_begin(z0, cc), compiler_begin(w1, cc)}), cc);
  Module m;
  m.add("main", FunctionNode::make({x, w0, w1}, CallNode::make(Op::kAdd, {z0, z1})));
  return m;
}

TEST(Types, BroadcastingFollowsNumpyRules) {
  auto a = VarNode::make("a", f32({4, 1, 3}));
  auto b = VarNode::make("b", f32({5, 1}));
  auto c = CallNode::make(Op::kAdd, {a, b});
  EXPECT_EQ(type_to_string(c->type()), "Tensor[(4, 5, 3), float32]");
}

TEST(Types, IncompatibleShapesAreATypeError) {
  auto a = VarNode::make("a", f32({4, 3}));
  auto b = VarNode::make("b", f32({5}));
  EXPECT_THROW(CallNode::make(Op::kAdd, {a, b}), TypeError);
}

TEST(Types, MixedDtypesAreATypeError) {
  auto a = VarNode::make("a", f32({4}));
  auto b = VarNode::make("b", TypeNode::tensor({4}, DType::kInt32));
  EXPECT_THROW(CallNode::make(Op::kAdd, {a, b}), TypeError);
}

TEST(Types, TupleIndexOutOfRangeIsATypeError) {
  auto a = VarNode::make("a", f32({2}));
  auto t = TupleNode::make({a, a});
  EXPECT_EQ(TupleGetItemNode::make(t, 1)->type()->shape(), std::vector<std::int64_t>{2});
  EXPECT_THROW(TupleGetItemNode::make(t, 2), TypeError);
  EXPECT_THROW(TupleGetItemNode::make(a, 0), TypeError);
}

TEST(Types, CallArityAndArgumentTypesAreChecked) {
  auto p = VarNode::make("p", f32({2}));
  auto fn = FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, p}));
  auto a = VarNode::make("a", f32({2}));
  auto b = VarNode::make("b", f32({3}));
  EXPECT_NO_THROW(CallNode::make(fn, {a}));
  EXPECT_THROW(CallNode::make(fn, {a, a}), TypeError);
  EXPECT_THROW(CallNode::make(fn, {b}), TypeError);
}

TEST(Types, AFunctionTakingOneVariableTwiceIsATypeError) {
  // Short parameter lists are scanned for repeats, long ones go through a set.
  for (const std::size_t count : {2u, 16u, 17u, 40u}) {
    std::vector<Var> params;
    for (std::size_t i = 0; i < count; ++i) {
      params.push_back(VarNode::make("p" + std::to_string(i), f32({2})));
    }
    EXPECT_NO_THROW(FunctionNode::make(params, params.back())) << count << " parameters";
    params.back() = params.front();
    EXPECT_THROW(FunctionNode::make(params, params.back()), TypeError) << count << " parameters";
  }
}

TEST(Traversal, PostOrderVisitsSharedNodesOnceChildrenFirst) {
  Module m = seed_graph();
  auto order = post_order(m.main()->body());
  std::unordered_map<const ExprNode*, std::size_t> pos;
  for (std::size_t i = 0; i < order.size(); ++i) {
    EXPECT_TRUE(pos.emplace(order[i].get(), i).second);
  }
  for (const auto& n : order) {
    for (const auto& k : children(*n)) EXPECT_LT(pos.at(k.get()), pos.at(n.get()));
  }
  EXPECT_EQ(order.back(), m.main()->body());
}

TEST(Traversal, AHundredThousandNodeChainDoesNotOverflowTheStack) {
  auto x = VarNode::make("x", f32({1}));
  Expr e = x;
  for (int i = 0; i < 100000; ++i) e = CallNode::make(Op::kAdd, {e, x});
  EXPECT_EQ(post_order(e).size(), 100001u);
  Expr copy = rewrite(e, [](const Expr& old, std::vector<Expr> kids) {
    return with_children(old, std::move(kids));
  });
  EXPECT_EQ(copy, e);
  EXPECT_EQ(structural_hash(e), structural_hash(e));
  EXPECT_TRUE(structural_equal(e, e));
  // Destroying a long chain must not recurse either; releasing it here exercises that.
}

TEST(Traversal, DroppingDeepChainsWithSharedLinksDoesNotOverflowTheStack) {
  // Release takes a shortcut when only leaves can die; these shapes must still take the
  // iterative path: each link used twice by one parent, and diamonds where a link dies only
  // when the second of its two sole-owned users does.
  auto x = VarNode::make("x", f32({1}));
  {
    Expr doubled = x;
    for (int i = 0; i < 100000; ++i) doubled = CallNode::make(Op::kAdd, {doubled, doubled});
    EXPECT_EQ(post_order(doubled).size(), 100001u);
  }
  {
    Expr diamond = x;
    for (int i = 0; i < 100000; ++i) {
      Expr left = CallNode::make(Op::kAdd, {diamond, x});
      Expr right = CallNode::make(Op::kMultiply, {diamond, x});
      diamond = TupleNode::make({left, right});
      diamond = CallNode::make(
          Op::kAdd, {TupleGetItemNode::make(diamond, 0), TupleGetItemNode::make(diamond, 1)});
    }
    EXPECT_EQ(post_order(diamond).size(), 1 + 6 * 100000u);
  }
  // Both graphs die at the closing braces above; getting here is the assertion.
}

TEST(Traversal, AFunctionsKeptBodyOrderIsThePostOrderOfItsBodyFromEveryThread) {
  const Module m = seed_graph();
  const Function& main = m.main();
  std::vector<const std::vector<Expr>*> seen(4, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = &main->body_order(); });
  }
  for (auto& t : threads) t.join();
  const std::vector<Expr> expected = post_order(main->body());
  ASSERT_FALSE(expected.empty());
  for (const auto* order : seen) {
    ASSERT_EQ(order, &main->body_order()) << "computed once, then the same list";
    EXPECT_EQ(*order, expected);
  }
}

TEST(Traversal, DroppingADeepFunctionWhoseBodyOrderIsKeptDoesNotOverflowTheStack) {
  // The kept order holds a second reference to every body node; dropping the function must
  // still release the chain without recursing, whichever reference goes last.
  auto x = VarNode::make("x", f32({1}));
  Expr e = x;
  for (int i = 0; i < 100000; ++i) e = CallNode::make(Op::kAdd, {e, x});
  Function fn = FunctionNode::make({x}, std::move(e));
  EXPECT_EQ(fn->body_order().size(), 100001u);
  fn.reset();  // getting past this line is the assertion
}

TEST(Structural, EqualityIgnoresVariableNamesAndSharing) {
  auto mk = [](const std::string& n, bool share) {
    auto x = VarNode::make(n, f32({3}));
    Expr a = CallNode::make(Op::kAdd, {x, x});
    Expr b = share ? a : CallNode::make(Op::kAdd, {x, x});
    return FunctionNode::make({x}, CallNode::make(Op::kMultiply, {a, b}));
  };
  EXPECT_TRUE(structural_equal(mk("x", true), mk("y", false)));
  EXPECT_EQ(structural_hash(mk("x", true)), structural_hash(mk("y", false)));
}

TEST(Structural, ComparingNamesTellsApartModulesThatPrintDifferently) {
  // Outer parameter %x, and a local function whose parameter is named `inner`.
  auto mk = [](const std::string& outer, const std::string& inner) {
    auto x = VarNode::make(outer, f32({3}));
    auto p = VarNode::make(inner, f32({3}));
    Function local = FunctionNode::make({p}, CallNode::make(Op::kAdd, {p, p}),
                                        Attrs{{"Primitive", std::int64_t{1}}});
    return FunctionNode::make({x}, CallNode::make(local, {x}));
  };
  EXPECT_TRUE(structural_equal(mk("x", "p"), mk("x", "p"), VarNames::kCompared));
  EXPECT_FALSE(structural_equal(mk("x", "p"), mk("y", "p"), VarNames::kCompared));
  EXPECT_FALSE(structural_equal(mk("x", "p"), mk("x", "q"), VarNames::kCompared));
  EXPECT_TRUE(structural_equal(mk("x", "p"), mk("y", "q")));
}

TEST(Structural, DifferentOpsOrTargetsAreNotEqual) {
  auto x = VarNode::make("x", f32({3}));
  auto a = FunctionNode::make({x}, CallNode::make(Op::kAdd, {x, x}));
  auto y = VarNode::make("x", f32({3}));
  auto b = FunctionNode::make({y}, CallNode::make(Op::kSubtract, {y, y}));
  EXPECT_FALSE(structural_equal(a, b));
  auto z = VarNode::make("z", f32({3}));
  auto c = FunctionNode::make({z}, compiler_begin(z, "a"));
  auto w = VarNode::make("z", f32({3}));
  auto d = FunctionNode::make({w}, compiler_begin(w, "b"));
  EXPECT_FALSE(structural_equal(c, d));
}

TEST(Structural, ClosedFunctionsSharingTheirBodyAreEqualOnlyWithTheSameParameterOrder) {
  auto x = VarNode::make("x", f32({3}));
  auto y = VarNode::make("y", f32({3}));
  Expr body = CallNode::make(Op::kSubtract, {x, y});
  Function f = FunctionNode::make({x, y}, body);
  Function same = FunctionNode::make({x, y}, body);
  Function swapped = FunctionNode::make({y, x}, body);
  EXPECT_TRUE(closed_functions_equal(f, same));
  EXPECT_FALSE(closed_functions_equal(f, swapped));
  EXPECT_EQ(closed_functions_equal(f, swapped), structural_equal(f, swapped));
}

TEST(Structural, ParameterOrderMatters) {
  auto a1 = VarNode::make("a", f32({3}));
  auto b1 = VarNode::make("b", f32({3}));
  auto f = FunctionNode::make({a1, b1}, CallNode::make(Op::kSubtract, {a1, b1}));
  auto a2 = VarNode::make("a", f32({3}));
  auto b2 = VarNode::make("b", f32({3}));
  auto g = FunctionNode::make({a2, b2}, CallNode::make(Op::kSubtract, {b2, a2}));
  EXPECT_FALSE(structural_equal(f, g));
}

TEST(Regions, SeedGraphRegionIdsFollowTvmPostOrderNumbering) {
  Module m = seed_graph();
  RegionSet rs = RegionSet::build(m.main()->body());
  auto regions = rs.regions();
  ASSERT_EQ(regions.size(), 2u);
  EXPECT_EQ(regions[0]->id, 0);
  EXPECT_EQ(regions[1]->id, 2);
  EXPECT_EQ(regions[0]->ins.size(), 2u);
  EXPECT_EQ(regions[0]->outs.size(), 1u);
  EXPECT_EQ(rs.next_id(), 4);
}

TEST(Verify, SeedGraphVerifies) { EXPECT_NO_THROW(verify(seed_graph())); }

TEST(Verify, EndWithoutRegionIsRejected) {
  auto x = VarNode::make("x", f32({2}));
  Module m;
  m.add("main", FunctionNode::make({x}, compiler_end(x, "ccompiler")));
  EXPECT_THROW(verify(m), VerifyError);
}

TEST(Verify, MismatchedTargetsAreRejected) {
  auto x = VarNode::make("x", f32({2}));
  Module m;
  m.add("main",
        FunctionNode::make({x}, compiler_end(CallNode::make(Op::kAdd, {compiler_begin(x, "a"),
                                                                       compiler_begin(x, "a")}),
                                             "b")));
  EXPECT_THROW(verify(m), VerifyError);
}

TEST(Verify, InconsistentArgumentRegionsAreRejected) {
  auto x = VarNode::make("x", f32({2}));
  Module m;
  m.add("main", FunctionNode::make(
                    {x}, compiler_end(CallNode::make(Op::kAdd, {compiler_begin(x, "a"), x}), "a")));
  EXPECT_THROW(verify(m), VerifyError);
}

TEST(Verify, ValueLeavingARegionWithoutEndIsRejected) {
  auto x = VarNode::make("x", f32({2}));
  Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(Op::kAdd, {compiler_begin(x, "a"),
                                                                  compiler_begin(x, "a")})));
  EXPECT_THROW(verify(m), VerifyError);
}

TEST(Verify, FreeVariablesAndUndefinedGlobalsAreRejected) {
  auto x = VarNode::make("x", f32({2}));
  auto y = VarNode::make("y", f32({2}));
  Module m;
  m.add("main", FunctionNode::make({x}, CallNode::make(Op::kAdd, {x, y})));
  EXPECT_THROW(verify(m), VerifyError);
  Module n;
  auto g = GlobalVarNode::make("nope", TypeNode::func({f32({2})}, f32({2})));
  n.add("main", FunctionNode::make({x}, CallNode::make(g, {x})));
  EXPECT_THROW(verify(n), VerifyError);
}

TEST(Verify, RecursionIsRejected) {
  auto ft = TypeNode::func({f32({2})}, f32({2}));
  auto p = VarNode::make("p", f32({2}));
  auto q = VarNode::make("q", f32({2}));
  Module m;
  m.add("main", FunctionNode::make({p}, CallNode::make(GlobalVarNode::make("f", ft), {p})));
  m.add("f", FunctionNode::make({q}, CallNode::make(GlobalVarNode::make("f", ft), {q})));
  EXPECT_THROW(verify(m), VerifyError);
}

TEST(Verify, AGlobalSymbolThatIsNoCIdentifierIsRejected) {
  auto x = VarNode::make("x", f32({2}));
  const auto with_symbol = [&](AttrValue symbol) {
    Module m;
    m.add("main", FunctionNode::make({x}, x, Attrs{{"global_symbol", std::move(symbol)}}));
    return m;
  };
  EXPECT_NO_THROW(verify(with_symbol(std::string("tvmgen_default_ccompiler_main_0"))));
  EXPECT_THROW(verify(with_symbol(std::string("has space"))), VerifyError);
  EXPECT_THROW(verify(with_symbol(std::string("9lives"))), VerifyError);
  EXPECT_THROW(verify(with_symbol(std::int64_t{3})), VerifyError);
}

TEST(Module, CopiesStayIndependentValuesWhenEitherSideChanges) {
  auto x = VarNode::make("x", f32({2}));
  const Function identity = FunctionNode::make({x}, x);
  Module empty;
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_EQ(empty.find("main"), nullptr);
  EXPECT_THROW(empty.main(), VerifyError);

  Module a;
  a.add("main", identity);
  Module b = a;  // a copy: the function nodes are shared, the name table is not
  auto y = VarNode::make("y", f32({2}));
  const Function other = FunctionNode::make({y}, y);
  b.add("helper", other);
  b.replace("main", other);
  EXPECT_EQ(a.size(), 1u);
  EXPECT_EQ(a.main(), identity);
  EXPECT_EQ(a.find("helper"), nullptr);
  EXPECT_EQ(b.size(), 2u);
  EXPECT_EQ(b.main(), other);
  EXPECT_EQ(b.index_of("helper"), 1u);

  Module c = b;
  c.replace("helper", identity);  // changing the copy leaves the original as it was
  EXPECT_EQ(*b.find("helper"), other);
  EXPECT_EQ(*c.find("helper"), identity);
  EXPECT_THROW(c.add("main", identity), VerifyError);
  EXPECT_THROW(c.replace("absent", identity), VerifyError);
  EXPECT_EQ(c.index_of("absent"), c.size());
}

TEST(Module, NamesAreFoundBeforeAndAfterTheModuleGrowsAnIndex) {
  // Small modules scan their names, large ones keep an index: lookups, duplicates and
  // replacement must behave the same on both sides of the switch and across copies.
  auto x = VarNode::make("x", f32({2}));
  const Function identity = FunctionNode::make({x}, x);
  auto y = VarNode::make("y", f32({2}));
  const Function other = FunctionNode::make({y}, y);
  Module m;
  for (std::size_t i = 0; i < 40; ++i) {
    const std::string name = "f" + std::to_string(i);
    m.add(name, identity);
    Module copy = m;
    for (std::size_t j = 0; j <= i; ++j) {
      const std::string seen = "f" + std::to_string(j);
      ASSERT_EQ(m.index_of(seen), j) << seen << " in a module of " << i + 1;
      ASSERT_EQ(copy.index_of(seen), j) << seen << " in a copy of a module of " << i + 1;
    }
    EXPECT_EQ(m.index_of("f" + std::to_string(i + 1)), m.size());
    EXPECT_THROW(m.add(name, identity), VerifyError) << name;
    EXPECT_THROW(copy.add("f0", identity), VerifyError) << "f0 in a copy of " << i + 1;
  }
  m.replace("f0", other);
  m.replace("f39", other);
  EXPECT_EQ(*m.find("f0"), other);
  EXPECT_EQ(*m.find("f39"), other);
  EXPECT_EQ(*m.find("f20"), identity);
  EXPECT_EQ(m.find("main"), nullptr);
  EXPECT_THROW(m.replace("main", other), VerifyError);
}

TEST(Verify, ParameterNamesArePrintableAsciiWithoutQuotesOrBackslashesAndNotAllDigits) {
  const auto with_name = [](const std::string& name) {
    auto x = VarNode::make(name, f32({2}));
    Module m;
    m.add("main", FunctionNode::make({x}, x));
    return m;
  };
  // TVM's frontends name inputs like these; the text form quotes them.
  for (const char* ok : {"x", "input::-1", "input-x::2", "my var", "0abc", "a/b.c"}) {
    EXPECT_NO_THROW(verify(with_name(ok))) << ok;
  }
  // Digits only spell the text form's numbered bindings; '"' and '\' would need escapes.
  for (const std::string& bad : std::vector<std::string>{"", "0", "123", "a\"b", "a\\b",
                                                         "tab\there", std::string("nul\0", 4)}) {
    try {
      verify(with_name(bad));
      ADD_FAILURE() << "accepted " << bad;
    } catch (const VerifyError& e) {
      const std::string what = e.what();
      EXPECT_NE(what.find("is not a name"), std::string::npos) << what;
      EXPECT_EQ(what.find('\n'), std::string::npos) << what;
      EXPECT_EQ(what.find('\t'), std::string::npos) << what;
    }
  }
}

TEST(Verify, TwoParametersWithOneNameAreRejectedInShortAndLongParameterLists) {
  // Short lists are scanned, long ones go through a set: both must see the repeat.
  for (const std::size_t count : {2u, 3u, 17u, 40u}) {
    const auto with_params = [&](bool repeat) {
      std::vector<Var> params;
      for (std::size_t i = 0; i < count; ++i) {
        const std::string name = repeat && i + 1 == count ? "p0" : "p" + std::to_string(i);
        params.push_back(VarNode::make(name, f32({2})));
      }
      Module m;
      m.add("main", FunctionNode::make(params, params.back()));
      return m;
    };
    EXPECT_NO_THROW(verify(with_params(false))) << count << " parameters";
    EXPECT_THROW(verify(with_params(true)), VerifyError) << count << " parameters";
  }
}

TEST(Verify, AFreeVariableIsRejectedInShortAndLongParameterLists) {
  // Short lists are scanned for the body's variables, long ones go through a set.
  for (const std::size_t count : {1u, 16u, 17u, 40u}) {
    std::vector<Var> params;
    for (std::size_t i = 0; i < count; ++i) {
      params.push_back(VarNode::make("p" + std::to_string(i), f32({2})));
    }
    const auto with_body = [&](Expr body) {
      Module m;
      m.add("main", FunctionNode::make(params, std::move(body)));
      return m;
    };
    EXPECT_NO_THROW(verify(with_body(CallNode::make(Op::kAdd, {params.front(), params.back()}))))
        << count << " parameters";
    auto free = VarNode::make("free", f32({2}));
    EXPECT_THROW(verify(with_body(CallNode::make(Op::kAdd, {params.back(), free}))), VerifyError)
        << count << " parameters";
  }
}

TEST(Verify, NamesTheFunctionOnARecursiveCallCycle) {
  Module m;
  auto x = VarNode::make("x", f32({2}));
  m.add("main", FunctionNode::make({x}, x));
  auto y = VarNode::make("y", f32({2}));
  auto gv_main = m.global_var("main");
  m.add("helper", FunctionNode::make({y}, CallNode::make(gv_main, {y})));
  auto z = VarNode::make("z", f32({2}));
  m.replace("main", FunctionNode::make({z}, CallNode::make(m.global_var("helper"), {z})));
  try {
    verify(m);
    FAIL() << "a cycle main -> helper -> main verified";
  } catch (const VerifyError& e) {
    // The walk starts at @main, the first function, and meets it again through @helper.
    EXPECT_NE(std::string(e.what()).find("recursive call cycle through @main"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace aotfuzz::ir

// The reference interpreter: evaluates a module directly on the IR, independent of the aot
// pipeline, to produce the expected outputs the oracle compares against.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "ir/error.h"
#include "ir/expr.h"
#include "ir/module.h"
#include "reference/value.h"

namespace aotfuzz::reference {

/// The module cannot be evaluated as asked: a missing function, an argument count or type
/// mismatch, a recursive call, a free variable, a function used as a value.
class EvalError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// Evaluates `@function` of `module` on `args` and returns its result (a tensor or a tuple).
///
/// Semantics: add/subtract/multiply broadcast like NumPy; float32 arithmetic is IEEE single
/// precision exactly as C `float a + b` (round to nearest even, denormals kept, no contraction);
/// int32 and int8 arithmetic wraps modulo 2^32 / 2^8; annotations are identities; tuples,
/// TupleGetItem, calls of global functions (by name, looked up in `module`) and of local
/// functions work at any nesting. Evaluation is iterative (one post-order walk per function
/// body and an explicit frame stack for calls), so neither long chains nor deep call chains use
/// the C++ stack, and each intermediate is freed after its last use.
///
/// Throws EvalError (or ValueError for oversized tensors) on bad input; `module` must outlive
/// the call.
Value evaluate(const ir::Module& module, const std::string& function,
               const std::vector<Value>& args);

/// evaluate(module, "main", inputs). Use Value::flatten() on the result for per-output tensors.
Value run_main(const ir::Module& module, const std::vector<Value>& inputs);

/// Evaluation plans kept from one evaluation to the next: a case evaluates the same functions in
/// several stages, and the plan interpreter calls each kernel again and again. A plan belongs to
/// a function node whatever name it is evaluated under: names appear only in messages, which are
/// built for the evaluation at hand, so they are the same with or without the cache. The cache
/// holds a reference to every function it has planned: no other function can take over a planned
/// one's address while the cache lives. It also keeps the interpreter's stacks between
/// evaluations (empty in between, also after an exception), so one cache serves one evaluation at
/// a time: one per thread.
class PlanCache {
 public:
  PlanCache();
  ~PlanCache();
  PlanCache(const PlanCache&) = delete;
  PlanCache& operator=(const PlanCache&) = delete;
  /// The plans; defined in interpreter.cc only.
  struct Entries;
  Entries& entries() { return *entries_; }

 private:
  std::unique_ptr<Entries> entries_;
};

/// evaluate() and run_main() reusing (and filling) `plans`.
Value evaluate(const ir::Module& module, const std::string& function,
               const std::vector<Value>& args, PlanCache& plans);
Value run_main(const ir::Module& module, const std::vector<Value>& inputs, PlanCache& plans);
/// Evaluates `fn`, which need not be in `module` (a kernel: a local primitive function), under
/// `name` in messages; global calls inside it resolve in `module`.
Value evaluate_function(const ir::Module& module, const ir::Function& fn, const std::string& name,
                        const std::vector<Value>& args, PlanCache& plans);

/// The NumPy broadcast of two shapes; throws EvalError when they are incompatible.
std::vector<std::int64_t> broadcast_shapes(const std::vector<std::int64_t>& a,
                                           const std::vector<std::int64_t>& b);

}  // namespace aotfuzz::reference

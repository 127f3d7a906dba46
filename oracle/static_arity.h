// Static arity check: the argument count of every call the emitted AoT executor makes, read back
// from the C text, to compare with the arities the IR says the callees take.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "aot/codegen.h"
#include "ir/error.h"

namespace aotfuzz::oracle {

/// The C text has no executor for the module, or a call site that cannot be read.
class StaticArityError : public ir::Error {
 public:
  using ir::Error::Error;
};

/// The suffixes of the AoT executor's inner function after `tvmgen_<mod>`: `_run_model` up to
/// TVM v0.8, `___tvm_main__` from v0.9 (TVM PR #10337); the builtin pipeline emits the first.
inline constexpr std::string_view kExecutorSuffixes[] = {"_run_model", "___tvm_main__"};

/// Every call site in the body of `tvmgen_<mod_name>_run_model` (or `___tvm_main__`) in
/// `c_source`, in text order:
/// a packed call `name((TVMValue*) stack_value, (int*) stack_tcode, N, ...)` gives N (the
/// num_args it passes), a direct call `name(a, b, ...)` gives its argument count. Calls are the
/// statements `if (name(...) != 0) return -1;` the emitter writes (and TVM's for packed calls)
/// and `(void)name(...);` (TVM's for direct calls). Throws StaticArityError when
/// the executor is missing or a call site is malformed.
std::vector<aot::CallSiteInfo> static_arity(std::string_view c_source,
                                            std::string_view mod_name = "default");

/// The number of parameters of the C definition of `name` in `c_source` (a definition: a return
/// type before the name, a body after the parameter list), or nullopt when it has none.
std::optional<int> definition_arity(std::string_view c_source, std::string_view name);

/// The number of packed arguments the C definition of `name` reads: one more than the highest k
/// of its `((TVMValue*)args)[k]` (how TVM's packed functions, kernels and BYOC wrappers alike,
/// take their arguments); nullopt when there is no such definition or it reads none.
std::optional<int> packed_definition_arity(std::string_view c_source, std::string_view name);

/// The call sites whose callee or argument count differs from the expectation (pairs of
/// expected, actual; a missing or extra call site pairs with a default CallSiteInfo{"", -1}).
std::vector<std::pair<aot::CallSiteInfo, aot::CallSiteInfo>> arity_differences(
    const std::vector<aot::CallSiteInfo>& expected, const std::vector<aot::CallSiteInfo>& actual);

}  // namespace aotfuzz::oracle

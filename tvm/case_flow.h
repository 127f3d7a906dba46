// A case whose system under test is Apache TVM (`--sut tvm`): the graph goes to TVM's own
// MergeCompilerRegions, PartitionGraph and AoT build through the driver (tvm/driver.h);
// TVM's C runs under the same harness and is judged by the same judge as the builtin pipeline's.
// The builtin pipeline runs beside it for the reference result and, by comparing the two
// partitioned modules, for which stage a difference is in.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "ir/module.h"
#include "oracle/case.h"
#include "oracle/executor.h"
#include "tvm/driver.h"

namespace aotfuzz::tvm {

/// prepare_case for TVM (TvmSystem::prepare), its requests sent to `driver`. Verdicts it settles:
///  - invalid-input: the graph does not verify, or the builtin pipeline refuses it and TVM fails
///    on it too (the two agree that it is not a graph to compile);
///  - sut-error / sut-crash / timeout at merge, partition or codegen (TVM's build): TVM raised,
///    died or hung on a graph the builtin pipeline compiles;
///  - arity (static, stage codegen): a call site in TVM's AoT executor passes a different number
///    of arguments than its callee takes, as TVM itself says: the arguments the callee's C
///    definition reads (packed) or declares (direct), else its type in TVM's partitioned module;
///  - toolchain-error: no TVM home, TVM does not import, the driver cannot start.
/// The returned case runs TVM's C; a pass becomes `fidelity` at the first stage where the
/// builtin pipeline's module differs from TVM's (instead_of_pass). With in_process_only TVM
/// partitions but does not build, and the verdict is that comparison's (pass or fidelity).
std::optional<oracle::PreparedCase> prepare_tvm_case(const ir::Module& annotated,
                                                     const oracle::CaseOptions& options,
                                                     oracle::CaseResult& r, TvmDriver& driver);

/// A TVM case between the steps before TVM and TVM's answer: what prepare_tvm_case does is
/// begin_tvm_case, the driver's build of `request`, then finish_tvm_case, which a campaign worker
/// splits so that TVM builds some cases while it compiles and runs others.
struct TvmCaseStart {
  /// The case's graph with tensor parameters only (flatten_tuple_params).
  ir::Module annotated;
  /// The builtin pipeline's refusal of the graph (a merge-unsafe graph), if it refuses it.
  std::optional<oracle::Verdict> builtin_refusal;
  /// The driver's request (driver.py's protocol).
  nlohmann::json request;
  /// The time the steps before TVM took.
  std::chrono::microseconds own_time{0};
};

/// The steps of prepare_tvm_case before TVM (verification, the reference, the builtin pipeline,
/// the request); nullopt when they settle the verdict, which is then in r.
std::optional<TvmCaseStart> begin_tvm_case(const ir::Module& annotated,
                                           const oracle::CaseOptions& options,
                                           oracle::CaseResult& r);

/// The steps of prepare_tvm_case after TVM's answer `tvm` to start.request (`driver`: its TVM
/// version and C runtime directory).
std::optional<oracle::PreparedCase> finish_tvm_case(const TvmCaseStart& start, const TvmBuild& tvm,
                                                    const oracle::CaseOptions& options,
                                                    oracle::CaseResult& r, TvmDriver& driver);

/// `annotated` with each tuple-typed parameter of @main replaced by one tensor parameter per
/// field, named `<param>_<k>` (as the exported pytest files name them), and the tuple rebuilt
/// from them: TVM's AoT executor takes tensors only. The same module when there is none.
ir::Module flatten_tuple_params(const ir::Module& annotated);

/// The graph of `main` (tensor parameters only) in the driver's JSON form: {"params": [{"name",
/// "shape", "dtype"}], "nodes": [...], "result": i}, nodes in post order, params first.
nlohmann::json tvm_graph_json(const ir::Function& main);

/// `module` (TVM's partitioned module, read back) with @main's parameters renamed, in order, to
/// the names of `names`: the driver prints them as placeholders, since TVM prints a name that is
/// no identifier bare. Unchanged when the counts differ.
ir::Module with_main_params_named(const ir::Module& module, const std::vector<ir::Var>& names);

/// Whether a TVM error says TVM needed its LLVM codegen (absent from builds without LLVM): an
/// environment limit, a toolchain-error, never a finding.
bool needs_llvm(const std::string& tvm_message);

}  // namespace aotfuzz::tvm

// Declarations shared by the per-construct emitters (codegen_*.cc); not part of the public API.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "aot/c_writer.h"
#include "aot/call_site.h"
#include "aot/options.h"
#include "aot/storage_plan.h"
#include "ir/expr.h"
#include "ir/module.h"

namespace aotfuzz::aot::detail {

/// "float", "int32_t", "int8_t".
std::string_view c_type(ir::DType dtype);
/// The DLDataType code ("kDLFloat", "kDLInt") and bits ("32", "8") a descriptor of `dtype` holds.
std::string dtype_code(ir::DType dtype);
std::string dtype_bits(ir::DType dtype);

/// `static const <type> name[n] = {...};`: a Constant as read-only data (TVM links constants
/// the same way, as `static const` arrays of the generated C). With `filled` false the array is
/// declared without its values (bug kUninitialisedExternalConstants) and so is all zeros.
std::string constant_definition(const std::string& name, const ir::ConstantNode& c,
                                bool filled = true);

/// "1 input", "3 inputs" (for comments).
std::string count_of(std::size_t n, const std::string& noun);

/// The packed C signature `int32_t name(TVMValue* args, int* type_codes, int num_args, TVMValue*
/// ret, int* ret_code, void* resource)`, without a trailing ';' or '{'.
std::string packed_signature(const std::string& name);

/// What an executor call goes to.
struct Callee {
  std::string name;
  ir::Function fn;
  bool external = false;  ///< a global function with a non-default `Compiler`: always packed
  /// Flattened parameter and result tensors of `fn`.
  std::vector<ir::Type> inputs;
  std::vector<ir::Type> outputs;
};

/// Every callee of @main in first-call order, and for each call of @main (post order) the
/// index of its callee. Structurally equal primitive functions share one callee.
struct CalleeTable {
  std::vector<Callee> callees;
  std::vector<int> call_callee;  ///< per call node of @main in post order
  std::vector<const ir::CallNode*> calls;
};

/// Classifies every call of @main; throws CodegenError for a callee outside the fused shape.
CalleeTable resolve_callees(const ir::Module& fused, const std::string& mod_name);
/// The same, given `main_order == ir::post_order(fused.main()->body())` already.
/// `bugs` reaches the kernel names (kKernelNameClash): when two kernels share a name, the table
/// holds one callee for both, as a C file with one definition per symbol would.
CalleeTable resolve_callees(const ir::Module& fused, const std::string& mod_name,
                            const std::vector<ir::Expr>& main_order, BugSet bugs = {});

/// The storage plan of @main and the callee of each of its steps, from one post order of @main:
/// what the C emitter and the plan interpreter (build_executor_program) both start from.
struct PlannedCalls {
  StoragePlan plan;
  CalleeTable table;
  /// Per step of `plan`, its callee in `table.callees` (a moved PlannedCalls keeps them valid).
  std::vector<const Callee*> step_callees;
};
/// Throws CodegenError when the plan's steps and the table's calls disagree.
PlannedCalls plan_calls(const ir::Module& fused, const Options& options);
/// expected_call_arity over an already resolved table.
std::vector<CallSiteInfo> expected_call_arity(const CalleeTable& table, const Options& options);

/// Emits statements computing every flattened result of `fn`'s body into `out_names` from the
/// flattened parameters `in_names` (C pointers of the right element types). Elementwise ops
/// broadcast by per-operand strides; every tensor is recomputed at the output index, so no
/// temporary buffers are needed. `used_inputs[k]` is set when input k is read. Throws
/// CodegenError (naming `where`) for anything but elementwise ops, params, constants, tuples and
/// TupleGetItems. The constants read are defined first as function-scope static arrays (left
/// unfilled when `fill_constants` is false: bug kUninitialisedExternalConstants).
void emit_elementwise_body(CWriter& w, const ir::Function& fn,
                           const std::vector<std::string>& in_names,
                           const std::vector<std::string>& out_names, const std::string& where,
                           std::vector<bool>& used_inputs, bool fill_constants = true);

/// A host kernel in the packed or unpacked API.
void emit_kernel(CWriter& w, const Callee& callee, const Options& options);
/// An external (ccompiler-style) function: a typed inner function and a packed wrapper.
void emit_external(CWriter& w, const Callee& callee, const Options& options);
/// The prototype of a kernel or external function (for the declarations block).
std::string callee_prototype(const Callee& callee, const Options& options);

/// The AoT executor `tvmgen_<mod>_run_model(void* input_0, ..., void* output_0, ...)`; `callees`
/// gives each step of `plan` its callee (same order as the steps).
void emit_executor(CWriter& w, const StoragePlan& plan, const std::vector<const Callee*>& callees,
                   const Options& options);
/// The prototype of run_model for `plan`.
std::string executor_prototype(const StoragePlan& plan, const Options& options);

/// The `tvmgen_<mod>.h` header and the `tvmgen_<mod>_run` entry point.
std::string interface_header(const ir::Function& main, const StoragePlan& plan,
                             const Options& options);
void emit_entry(CWriter& w, const ir::Function& main, const StoragePlan& plan,
                const Options& options);

}  // namespace aotfuzz::aot::detail

// generate_c: callee resolution, kernel naming, the IR-derived call arities, and the assembly of
// the generated files from the per-construct emitters.
#include "aot/codegen.h"

#include <algorithm>
#include <cstdint>
#include <unordered_map>

#include "aot/codegen_internal.h"
#include "aot/fuse_ops.h"
#include "aot/runtime_header.h"
#include "aot/storage_plan.h"
#include "ir/structural.h"
#include "ir/traversal.h"

namespace aotfuzz::aot {

const std::string& CSources::file(const std::string& name) const {
  for (const auto& [n, content] : files) {
    if (n == name) return content;
  }
  throw CodegenError("no generated file named " + name);
}

std::string symbol_prefix(const Options& options) { return mangled_module_name(options.mod_name); }
std::string header_file_name(const Options& options) { return symbol_prefix(options) + ".h"; }
std::string lib_file_name(const Options& options) { return symbol_prefix(options) + "_lib.c"; }

namespace {

bool is_primitive(const ir::FunctionNode& fn) { return fn.attrs().get_int("Primitive") == 1; }

std::vector<const ir::CallNode*> main_calls(const std::vector<ir::Expr>& main_order) {
  std::vector<const ir::CallNode*> calls;
  calls.reserve(main_order.size());
  for (const auto& node : main_order) {
    const auto* call = ir::as<ir::CallNode>(node);
    if (call == nullptr) continue;
    if (call->op()) {
      throw CodegenError("operator " + ir::describe(*call) +
                         " is called directly in @main; FuseOps must wrap it in a primitive "
                         "function");
    }
    calls.push_back(call);
  }
  return calls;
}

}  // namespace

namespace detail {

CalleeTable resolve_callees(const ir::Module& fused, const std::string& mod_name) {
  return resolve_callees(fused, mod_name, fused.main()->body_order());
}

CalleeTable resolve_callees(const ir::Module& fused, const std::string& mod_name,
                            const std::vector<ir::Expr>& main_order, BugSet bugs) {
  CalleeTable table;
  const KernelNames kernel_names(fused, mod_name, bugs);
  // Keyed by views of the names where they live (kernel_names, the module's attributes and
  // global vars), all alive until the table is done.
  std::unordered_map<std::string_view, int> by_name;
  std::vector<const ir::CallNode*> calls = main_calls(main_order);
  table.call_callee.reserve(calls.size());
  table.callees.reserve(calls.size());
  for (const ir::CallNode* call : calls) {
    // The callee's name and function first: the rest of a Callee is built once per name.
    const std::string* name = nullptr;
    const ir::Function* fn = nullptr;
    ir::Function local;
    bool external = false;
    if (const auto* gv = ir::as<ir::GlobalVarNode>(call->callee())) {
      fn = fused.find(gv->name());
      if (fn == nullptr) throw CodegenError("call of @" + gv->name() + ": no such function");
      const std::string* target = (*fn)->attrs().find_string("Compiler");
      if (target == nullptr || target->empty() || *target == "default") {
        throw CodegenError("call of @" + gv->name() +
                           ": only functions with a non-default Compiler attribute may be called "
                           "from @main");
      }
      name = (*fn)->attrs().find_string("global_symbol");
      if (name == nullptr) name = &gv->name();
      external = true;
    } else if (call->callee()->kind() == ir::ExprKind::kFunction) {
      local = std::static_pointer_cast<const ir::FunctionNode>(call->callee());
      fn = &local;
      if (!is_primitive(**fn)) {
        throw CodegenError("call of a local function without Primitive=1 in @main: " +
                           ir::describe(*call));
      }
      if (const std::string* target = (*fn)->attrs().find_string("Compiler");
          target != nullptr && *target != "default") {
        throw CodegenError("local primitive function with Compiler=\"" + *target +
                           "\" in @main; PartitionGraph outlines external functions as globals");
      }
      name = &kernel_names.name_of(fn->get());
    } else {
      throw CodegenError("call " + ir::describe(*call) + " has an unsupported callee");
    }
    auto it = by_name.find(*name);
    if (it == by_name.end()) {
      // A kernel name is sanitized and starts with "tvmgen_": only external names need the check.
      if (external && !is_c_identifier(*name)) {
        throw CodegenError("function name \"" + *name + "\" is not a C identifier");
      }
      Callee c;
      c.name = *name;
      c.fn = *fn;
      c.external = external;
      for (const auto& p : c.fn->params()) {
        std::vector<ir::Type> flat = ir::flatten_tensors(p->type());
        if (c.inputs.empty()) {
          c.inputs = std::move(flat);
        } else {
          c.inputs.insert(c.inputs.end(), std::make_move_iterator(flat.begin()),
                          std::make_move_iterator(flat.end()));
        }
      }
      c.outputs = ir::flatten_tensors(c.fn->ret_type());
      it = by_name.emplace(*name, static_cast<int>(table.callees.size())).first;
      table.callees.push_back(std::move(c));
    } else if (table.callees[it->second].fn != *fn &&
               // The very string the first callee was named by: the same kernel of kernel_names
               // (so structurally equal already) or the same global's attribute (the same fn).
               it->first.data() != name->data() &&
               (table.callees[it->second].external != external ||
                !ir::structural_equal(table.callees[it->second].fn, *fn))) {
      throw CodegenError("two different functions are both named " + *name);
    }
    table.call_callee.push_back(it->second);
  }
  table.calls = std::move(calls);
  return table;
}

std::vector<CallSiteInfo> expected_call_arity(const CalleeTable& table, const Options& options) {
  std::vector<CallSiteInfo> out;
  for (std::size_t i = 0; i < table.calls.size(); ++i) {
    const auto& c = table.callees[table.call_callee[i]];
    // From the callee's type alone: flattened parameters plus flattened results.
    std::size_t n = ir::flat_count(c.fn->ret_type());
    for (const auto& t : c.fn->type()->fields()) n += ir::flat_count(t);
    out.push_back(CallSiteInfo{c.name, static_cast<int>(n),
                               c.external || options.api == Options::Api::kPacked});
  }
  return out;
}

PlannedCalls plan_calls(const ir::Module& fused, const Options& options) {
  StorageOptions storage;
  storage.reuse = options.storage_reuse;
  storage.bugs = options.bugs;
  const ir::Function& main = fused.main();
  const std::vector<ir::Expr>& order = main->body_order();
  PlannedCalls out{plan_storage(main, storage, order),
                   resolve_callees(fused, options.mod_name, order, options.bugs), {}};
  if (out.table.calls.size() != out.plan.steps.size()) {
    throw CodegenError("internal: " + std::to_string(out.plan.steps.size()) +
                       " planned calls but " + std::to_string(out.table.calls.size()) +
                       " resolved");
  }
  out.step_callees.reserve(out.plan.steps.size());
  for (std::size_t s = 0; s < out.plan.steps.size(); ++s) {
    if (out.table.calls[s] != out.plan.steps[s].call.get()) {
      throw CodegenError("internal: call order of the storage plan and the callee table differ");
    }
    out.step_callees.push_back(&out.table.callees[out.table.call_callee[s]]);
  }
  return out;
}

}  // namespace detail

std::vector<CallSiteInfo> expected_call_arity(const ir::Module& fused, const Options& options) {
  return detail::expected_call_arity(detail::resolve_callees(fused, options.mod_name), options);
}

CSources generate_c(const ir::Module& fused, const Options& options) {
  // An empty name is TVM's default prefix alone ("tvmgen", mangled_module_name).
  if (!options.mod_name.empty() && !is_c_identifier(options.mod_name)) {
    throw CodegenError("mod_name \"" + options.mod_name +
                       "\" is not a C identifier fragment ([A-Za-z0-9_], not starting with a "
                       "digit)");
  }
  if (options.interface == Options::Interface::kC && options.api == Options::Api::kPacked) {
    throw CodegenError(
        "interface c requires the unpacked API (TVM: either interface_api == \"packed\" or "
        "unpacked-api == true)");
  }
  const ir::Function& main = fused.main();
  const detail::PlannedCalls planned = detail::plan_calls(fused, options);
  const StoragePlan& plan = planned.plan;
  const detail::CalleeTable& table = planned.table;
  const std::vector<const detail::Callee*>& step_callees = planned.step_callees;

  const std::string prefix = symbol_prefix(options);
  CWriter w;
  w.line("/* " + lib_file_name(options) + ": module \"" + options.mod_name +
         "\" (generated by aotfuzz; " +
         (options.api == Options::Api::kPacked ? "packed" : "unpacked") + " API, " +
         (options.interface == Options::Interface::kC ? "c" : "packed") + " interface). */");
  w.line("#include <stdint.h>");
  w.line("#include <string.h>");
  w.line();
  w.line("#include \"" + std::string(kRuntimeHeaderName) + "\"");
  w.line("#include \"" + header_file_name(options) + "\"");
  w.line();
  for (const auto& c : table.callees) w.line(detail::callee_prototype(c, options));
  w.line(detail::executor_prototype(plan, options) + ";");
  w.line();
  std::vector<const detail::Callee*> definitions;
  for (const auto& c : table.callees) definitions.push_back(&c);
  if (options.bugs.on(Bug::kNondeterministicFunctionOrder) && !definitions.empty()) {
    // Bug: the order depends on state outside the module, here the number of modules this
    // thread built before (as a counter or a pointer-keyed container kept across builds would).
    thread_local std::uint64_t builds = 0;
    const auto shift = static_cast<std::ptrdiff_t>(builds++ % definitions.size());
    std::rotate(definitions.begin(), definitions.begin() + shift, definitions.end());
  }
  for (const detail::Callee* c : definitions) {
    if (c->external) {
      detail::emit_external(w, *c, options);
    } else {
      detail::emit_kernel(w, *c, options);
    }
  }
  detail::emit_executor(w, plan, step_callees, options);
  detail::emit_entry(w, main, plan, options);

  CSources out;
  out.files.emplace_back(std::string(kRuntimeHeaderName), std::string(runtime_header_text()));
  out.files.emplace_back(header_file_name(options), detail::interface_header(main, plan, options));
  out.files.emplace_back(lib_file_name(options), w.take());
  out.expected_arity = expected_call_arity(fused, options);
  return out;
}

}  // namespace aotfuzz::aot

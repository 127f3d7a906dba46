// External functions (every non-default target), emitted like TVM's ccompiler codegen: a typed
// inner function computing the body and a packed wrapper unpacking the DLTensor arguments.
#include <algorithm>

#include "aot/codegen.h"
#include "aot/codegen_internal.h"

namespace aotfuzz::aot::detail {

namespace {

// Injected bug kExternalBindsInTraversalOrder: the name each parameter reads, numbered by where
// the body's post-order walk first meets it (parameters it never meets keep the rest, in order).
// Only for tensor parameters, one C argument each.
std::vector<std::string> names_in_traversal_order(const ir::Function& fn) {
  const auto& params = fn->params();
  std::vector<std::size_t> position(params.size(), params.size());
  std::size_t next = 0;
  for (const auto& node : fn->body_order()) {
    for (std::size_t p = 0; p < params.size(); ++p) {
      if (node.get() == params[p].get() && position[p] == params.size()) position[p] = next++;
    }
  }
  for (auto& p : position) {
    if (p == params.size()) p = next++;
  }
  std::vector<std::string> names;
  for (std::size_t p : position) names.push_back("in" + std::to_string(p));
  return names;
}

}  // namespace

void emit_external(CWriter& w, const Callee& callee, const Options& options) {
  const std::size_t n_in = callee.inputs.size();
  const std::size_t n = n_in + callee.outputs.size();
  std::vector<std::string> in_names, out_names;
  std::string params;
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_in = i < n_in;
    const auto& type = is_in ? callee.inputs[i] : callee.outputs[i - n_in];
    const std::string name = is_in ? "in" + std::to_string(i) : "out" + std::to_string(i - n_in);
    (is_in ? in_names : out_names).push_back(name);
    if (i) params += ", ";
    params += (is_in ? "const " : "") + std::string(c_type(type->dtype())) + "* " + name;
  }
  if (options.bugs.on(Bug::kExternalBindsInTraversalOrder) &&
      callee.fn->params().size() == n_in) {
    in_names = names_in_traversal_order(callee.fn);
  }
  const std::string inner = callee.name + "_";
  const auto target = callee.fn->attrs().get_string("Compiler").value_or("?");
  w.line("/* external function " + comment_text(callee.name) + " (Compiler=\"" +
         comment_text(target) + "\"): " + count_of(n_in, "input") + ", " +
         count_of(callee.outputs.size(), "output") + " */");
  w.open("static int32_t " + inner + "(" + (n ? params : "void") + ")");
  // Injected bug kDtypeBlindBuffer: as TVM v0.8's ccompiler codegen, each result goes through a
  // buffer of 4 * elements bytes, copied out whole, whatever the element size.
  const bool dtype_blind = options.bugs.on(Bug::kDtypeBlindBuffer);
  std::vector<std::string> result_names = out_names;
  if (dtype_blind) {
    for (std::size_t j = 0; j < callee.outputs.size(); ++j) {
      const std::int64_t elements = callee.outputs[j]->num_elements();
      const std::string buf = "buf" + std::to_string(j);
      w.line("static uint32_t " + buf + "[" + std::to_string(std::max<std::int64_t>(1, elements)) +
             "];");
      result_names[j] = "((" + std::string(c_type(callee.outputs[j]->dtype())) + "*)" + buf + ")";
    }
  }
  CWriter body(1);
  std::vector<bool> used;
  // Injected bug kUninitialisedExternalConstants: TVM v0.8's ccompiler constants are never
  // filled under the C runtime.
  emit_elementwise_body(body, callee.fn, in_names, result_names,
                        "external function " + callee.name, used,
                        !options.bugs.on(Bug::kUninitialisedExternalConstants));
  for (std::size_t i = 0; i < n_in; ++i) {
    if (!used[i]) w.line("(void)" + in_names[i] + ";");
  }
  w.raw(body.str());
  for (std::size_t j = 0; dtype_blind && j < callee.outputs.size(); ++j) {
    w.line("memcpy(" + out_names[j] + ", buf" + std::to_string(j) + ", 4 * " +
           std::to_string(callee.outputs[j]->num_elements()) + ");");
  }
  w.line("return 0;");
  w.close();
  w.line();

  w.open(packed_signature(callee.name));
  w.line("AOTFUZZ_TRACE_CALL(\"" + callee.name + "\", num_args);");
  w.line("AOTFUZZ_FAULT_POINT();");
  if (options.check_num_args) w.line("if (num_args != " + std::to_string(n) + ") return -1;");
  w.line("(void)type_codes;");
  w.line("(void)num_args;");
  w.line("(void)ret;");
  w.line("(void)ret_code;");
  w.line("(void)resource;");
  std::string call = "return " + inner + "(";
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_in = i < n_in;
    const auto& type = is_in ? callee.inputs[i] : callee.outputs[i - n_in];
    const std::string ptr = (is_in ? "const " : "") + std::string(c_type(type->dtype())) + "*";
    if (i) call += ", ";
    call += "(" + ptr + ")(((DLTensor*)args[" + std::to_string(i) + "].v_handle)->data)";
  }
  w.line(call + ");");
  w.close();
  w.line();
}

}  // namespace aotfuzz::aot::detail

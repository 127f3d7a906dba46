// Elementwise loop emission (shared by host kernels and external functions) and host kernels in
// the packed and unpacked APIs.
#include <algorithm>
#include <unordered_map>
#include <unordered_set>

#include "aot/codegen.h"
#include "aot/codegen_internal.h"
#include "ir/traversal.h"

namespace aotfuzz::aot::detail {
namespace {

// A flattened tensor inside a function body: a parameter tensor, an op call or a constant.
struct Leaf {
  int param = -1;
  const ir::CallNode* op = nullptr;
  int constant = -1;  // index into BodyLeaves::constants
};

// The C expression of `a OP b` for one dtype, wrapping for integers without undefined behaviour
// (the arithmetic happens on unsigned types; the conversion back is modular on every target
// compiler).
std::string op_expr(ir::Op op, ir::DType dtype, const std::string& a, const std::string& b) {
  std::string sym;
  switch (op) {
    case ir::Op::kAdd:
      sym = " + ";
      break;
    case ir::Op::kSubtract:
      sym = " - ";
      break;
    case ir::Op::kMultiply:
      sym = " * ";
      break;
    default:
      throw CodegenError("operator " + std::string(ir::op_name(op)) + " is not elementwise");
  }
  switch (dtype) {
    case ir::DType::kFloat32:
      return a + sym + b;
    case ir::DType::kInt32:
      return "(int32_t)((uint32_t)" + a + sym + "(uint32_t)" + b + ")";
    case ir::DType::kInt8:
      return "(int8_t)(uint8_t)((uint32_t)(uint8_t)" + a + sym + "(uint32_t)(uint8_t)" + b + ")";
  }
  throw CodegenError("unsupported dtype");
}

// Row-major offset of an operand of shape `operand` at the output index (i0, i1, ...) of shape
// `out`: NumPy broadcasting aligns shapes at the right and a size-1 dimension has stride 0.
std::string offset_expr(const std::vector<std::int64_t>& operand,
                        const std::vector<std::int64_t>& out) {
  const std::size_t r = out.size();
  const std::size_t k = operand.size();
  std::string expr;
  std::int64_t stride = 1;
  std::vector<std::string> terms;
  for (std::size_t e = k; e-- > 0;) {
    const std::size_t d = e + (r - k);  // output dimension of operand dimension e
    if (operand[e] != 1) {
      std::string term = "i";
      term += std::to_string(d);
      if (stride != 1) {
        term += " * ";
        term += std::to_string(stride);
      }
      terms.push_back(std::move(term));
    }
    stride *= operand[e];
  }
  for (auto it = terms.rbegin(); it != terms.rend(); ++it) {
    if (!expr.empty()) expr += " + ";
    expr += *it;
  }
  return expr.empty() ? "0" : expr;
}

}  // namespace

std::string_view c_type(ir::DType dtype) {
  switch (dtype) {
    case ir::DType::kFloat32:
      return "float";
    case ir::DType::kInt32:
      return "int32_t";
    case ir::DType::kInt8:
      return "int8_t";
  }
  throw CodegenError("unsupported dtype");
}

std::string dtype_code(ir::DType dtype) {
  return dtype == ir::DType::kFloat32 ? "kDLFloat" : "kDLInt";
}

std::string dtype_bits(ir::DType dtype) { return std::to_string(ir::dtype_bytes(dtype) * 8); }

std::string constant_definition(const std::string& name, const ir::ConstantNode& c, bool filled) {
  const std::string type(c_type(c.type()->dtype()));
  // An array of no elements is not C: an empty constant gets one unused element.
  const std::string extent = std::to_string(std::max<std::size_t>(c.values().size(), 1));
  if (!filled) return "static " + type + " " + name + "[" + extent + "];";
  std::string out = "static const " + type + " " + name + "[" + extent + "] = {";
  for (std::size_t i = 0; i < c.values().size(); ++i) {
    if (i) out += ", ";
    const std::int64_t v = c.values()[i];
    // INT32_MIN has no literal of type int: spell it as an expression.
    out += v == INT32_MIN ? "(-2147483647 - 1)" : std::to_string(v);
  }
  if (c.values().empty()) out += "0";
  return out + "};";
}

std::string count_of(std::size_t n, const std::string& noun) {
  return std::to_string(n) + " " + noun + (n == 1 ? "" : "s");
}

std::string packed_signature(const std::string& name) {
  return "int32_t " + name +
         "(TVMValue* args, int* type_codes, int num_args, TVMValue* ret, int* ret_code, "
         "void* resource)";
}

namespace {

// The flattened tensors of every value of a primitive or external function's body.
struct BodyLeaves {
  std::unordered_map<const ir::ExprNode*, std::vector<Leaf>> leaves;
  std::unordered_map<const ir::ExprNode*, std::size_t> order;  // op -> post-order position
  std::vector<ir::Type> param_types;                           // by flattened parameter
  std::vector<const ir::ConstantNode*> constants;              // in post order
};

// Walks `fn`'s body: each parameter, op, tuple and TupleGetItem mapped to its flattened leaves.
BodyLeaves body_leaves(const ir::Function& fn, std::size_t num_in_names, const std::string& where) {
  BodyLeaves b;
  for (const auto& p : fn->params()) {
    std::vector<Leaf> ls;
    for (const auto& t : ir::flatten_tensors(p->type())) {
      ls.push_back(Leaf{static_cast<int>(b.param_types.size()), nullptr});
      b.param_types.push_back(t);
    }
    b.leaves[p.get()] = std::move(ls);
  }
  if (b.param_types.size() != num_in_names) {
    throw CodegenError(where + ": " + std::to_string(b.param_types.size()) +
                       " flattened parameters but " + std::to_string(num_in_names) +
                       " input names");
  }
  auto lookup = [&](const ir::Expr& e) -> const std::vector<Leaf>& {
    auto it = b.leaves.find(e.get());
    if (it == b.leaves.end()) {
      throw CodegenError(where + ": " + ir::describe(*e) +
                         " is not a parameter of the function or a value it computes");
    }
    return it->second;
  };
  for (const auto& node : fn->body_order()) {
    switch (node->kind()) {
      case ir::ExprKind::kVar:
        lookup(node);
        break;
      case ir::ExprKind::kGlobalVar:
      case ir::ExprKind::kFunction:
        throw CodegenError(where + ": " + ir::describe(*node) + " inside a " +
                           "primitive or external function is not supported");
      case ir::ExprKind::kConstant:
        b.leaves[node.get()] = {Leaf{-1, nullptr, static_cast<int>(b.constants.size())}};
        b.constants.push_back(static_cast<const ir::ConstantNode*>(node.get()));
        break;
      case ir::ExprKind::kCall: {
        const auto& call = static_cast<const ir::CallNode&>(*node);
        if (!call.op() || !ir::is_elementwise(*call.op())) {
          throw CodegenError(where + ": " + ir::describe(call) +
                             " is not an elementwise operator (only add, subtract and multiply "
                             "can be compiled)");
        }
        for (const auto& a : call.args()) lookup(a);
        b.order[node.get()] = b.order.size();
        b.leaves[node.get()] = {Leaf{-1, &call}};
        break;
      }
      case ir::ExprKind::kTuple: {
        std::vector<Leaf> ls;
        for (const auto& f : static_cast<const ir::TupleNode&>(*node).fields()) {
          const auto& fs = lookup(f);
          ls.insert(ls.end(), fs.begin(), fs.end());
        }
        b.leaves[node.get()] = std::move(ls);
        break;
      }
      case ir::ExprKind::kTupleGetItem: {
        const auto& tgi = static_cast<const ir::TupleGetItemNode&>(*node);
        const auto& whole = lookup(tgi.tuple());
        const auto& fields = tgi.tuple()->type()->fields();
        std::size_t begin = 0;
        for (int i = 0; i < tgi.index(); ++i) begin += ir::flat_count(fields[i]);
        const std::size_t count = ir::flat_count(fields[tgi.index()]);
        b.leaves[node.get()] =
            std::vector<Leaf>(whole.begin() + static_cast<std::ptrdiff_t>(begin),
                              whole.begin() + static_cast<std::ptrdiff_t>(begin + count));
        break;
      }
    }
  }
  lookup(fn->body());
  return b;
}

// What one output's loop reads: the op calls it depends on, in post order, and the flattened
// parameters and constants they read, in order.
struct OutputInputs {
  std::vector<const ir::CallNode*> ops;
  std::vector<int> params;
  std::vector<int> constants;
};

std::string constant_name(int k) { return "c" + std::to_string(k); }

OutputInputs output_inputs(const BodyLeaves& b, const ir::CallNode* result) {
  OutputInputs in;
  std::unordered_set<const ir::CallNode*> seen{result};
  std::vector<const ir::CallNode*> stack{result};
  while (!stack.empty()) {
    const ir::CallNode* c = stack.back();
    stack.pop_back();
    in.ops.push_back(c);
    for (const auto& a : c->args()) {
      const Leaf& l = b.leaves.at(a.get()).front();
      if (l.constant >= 0) {
        if (std::find(in.constants.begin(), in.constants.end(), l.constant) ==
            in.constants.end()) {
          in.constants.push_back(l.constant);
        }
      } else if (l.op == nullptr) {
        if (std::find(in.params.begin(), in.params.end(), l.param) == in.params.end()) {
          in.params.push_back(l.param);
        }
      } else if (seen.insert(l.op).second) {
        stack.push_back(l.op);
      }
    }
  }
  std::sort(in.ops.begin(), in.ops.end(), [&](const ir::CallNode* x, const ir::CallNode* y) {
    return b.order.at(x) < b.order.at(y);
  });
  std::sort(in.params.begin(), in.params.end());
  std::sort(in.constants.begin(), in.constants.end());
  return in;
}

// The loop nest over `out_type` that computes one output element by element.
void emit_output_loop(CWriter& w, const BodyLeaves& b, const ir::CallNode* result,
                      const OutputInputs& in, const ir::Type& out_type,
                      const std::string& out_name, const std::vector<std::string>& in_names,
                      std::vector<bool>& used_inputs) {
  const auto& shape = out_type->shape();
  if (shape.empty()) w.open("");
  for (std::size_t d = 0; d < shape.size(); ++d) {
    const std::string i = "i" + std::to_string(d);
    w.open("for (int64_t " + i + " = 0; " + i + " < " + std::to_string(shape[d]) + "; ++" + i +
           ")");
  }
  std::unordered_map<const ir::CallNode*, std::string> value_name;
  for (int p : in.params) {
    used_inputs[p] = true;
    const auto& pt = b.param_types[p];
    w.line("const " + std::string(c_type(pt->dtype())) + " a" + std::to_string(p) + " = " +
           in_names[p] + "[" + offset_expr(pt->shape(), shape) + "];");
  }
  for (int k : in.constants) {
    const auto& ct = b.constants[k]->type();
    w.line("const " + std::string(c_type(ct->dtype())) + " k" + std::to_string(k) + " = " +
           constant_name(k) + "[" + offset_expr(ct->shape(), shape) + "];");
  }
  for (std::size_t k = 0; k < in.ops.size(); ++k) {
    const ir::CallNode* c = in.ops[k];
    auto operand = [&](const ir::Expr& a) {
      const Leaf& l = b.leaves.at(a.get()).front();
      if (l.constant >= 0) return "k" + std::to_string(l.constant);
      return l.op == nullptr ? "a" + std::to_string(l.param) : value_name.at(l.op);
    };
    const std::string name = "t" + std::to_string(k);
    w.line("const " + std::string(c_type(c->type()->dtype())) + " " + name + " = " +
           op_expr(*c->op(), c->type()->dtype(), operand(c->args()[0]), operand(c->args()[1])) +
           ";");
    value_name[c] = name;
  }
  w.line(out_name + "[" + offset_expr(shape, shape) + "] = " + value_name.at(result) + ";");
  if (shape.empty()) w.close();
  for (std::size_t d = 0; d < shape.size(); ++d) w.close();
}

}  // namespace

void emit_elementwise_body(CWriter& w, const ir::Function& fn,
                           const std::vector<std::string>& in_names,
                           const std::vector<std::string>& out_names, const std::string& where,
                           std::vector<bool>& used_inputs, bool fill_constants) {
  const BodyLeaves b = body_leaves(fn, in_names.size(), where);
  used_inputs.assign(in_names.size(), false);
  const auto& outs = b.leaves.at(fn->body().get());
  const auto out_types = ir::flatten_tensors(fn->body()->type());
  if (outs.size() != out_names.size()) {
    throw CodegenError(where + ": " + std::to_string(outs.size()) + " flattened results but " +
                       std::to_string(out_names.size()) + " output names");
  }
  // Only the constants some output reads are defined: an unused static array is a warning.
  std::vector<OutputInputs> inputs(outs.size());
  std::vector<bool> used_constants(b.constants.size(), false);
  for (std::size_t j = 0; j < outs.size(); ++j) {
    if (outs[j].constant >= 0) used_constants[outs[j].constant] = true;
    if (outs[j].op == nullptr) continue;
    inputs[j] = output_inputs(b, outs[j].op);
    for (int k : inputs[j].constants) used_constants[k] = true;
  }
  for (std::size_t k = 0; k < b.constants.size(); ++k) {
    if (used_constants[k]) {
      w.line(constant_definition(constant_name(static_cast<int>(k)), *b.constants[k],
                                 fill_constants));
    }
  }
  for (std::size_t j = 0; j < outs.size(); ++j) {
    const Leaf& result = outs[j];
    const ir::Type& out_type = out_types[j];
    w.line("/* " + out_names[j] + ": " + comment_text(ir::type_to_string(out_type)) + " */");
    if (result.op == nullptr) {
      std::string source;
      if (result.constant >= 0) {
        source = constant_name(result.constant);
      } else {
        used_inputs[result.param] = true;
        source = in_names[result.param];
      }
      w.line("memcpy(" + out_names[j] + ", " + source + ", " +
             std::to_string(tensor_bytes(out_type)) + ");");
      continue;
    }
    emit_output_loop(w, b, result.op, inputs[j], out_type, out_names[j], in_names, used_inputs);
  }
}

namespace {

// What TVM's MakePackedAPI binds for a DLTensor argument (ArgBinder::BindDLTensor): the type
// code, then ndim before the shape it bounds, dtype, every extent, the strides, byte_offset and
// the device. A kernel refuses a descriptor that disagrees instead of reading through it.
void emit_argument_check(CWriter& w, const std::string& kernel, std::size_t i,
                         const ir::Type& type) {
  const std::string k = std::to_string(i);
  const std::string t = "((const DLTensor*)args[" + k + "].v_handle)";
  std::string cond = "type_codes[" + k + "] != kTVMDLTensorHandle || " + t +
                     "->ndim != " + std::to_string(type->shape().size()) + " || " + t +
                     "->dtype.code != " + dtype_code(type->dtype()) + " || " + t +
                     "->dtype.bits != " + dtype_bits(type->dtype()) + " || " + t +
                     "->dtype.lanes != 1";
  for (std::size_t d = 0; d < type->shape().size(); ++d) {
    cond +=
        " || " + t + "->shape[" + std::to_string(d) + "] != " + std::to_string(type->shape()[d]);
  }
  // TVM accepts compact explicit strides too; the executor here always passes NULL.
  cond += " || " + t + "->strides != NULL || " + t + "->byte_offset != 0 || " + t +
          "->device.device_type != kDLCPU";
  w.open("if (" + cond + ")");
  w.line("AOTFUZZ_ARG_ERROR(\"" + kernel + "\", " + k + ");");
  w.line("return -1;");
  w.close();
}

std::vector<std::string> numbered(const std::string& prefix, std::size_t n) {
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) out.push_back(prefix + std::to_string(i));
  return out;
}

}  // namespace

std::string callee_prototype(const Callee& callee, const Options& options) {
  if (callee.external || options.api == Options::Api::kPacked) {
    return packed_signature(callee.name) + ";";
  }
  const std::size_t n = callee.inputs.size() + callee.outputs.size();
  std::string params;
  for (std::size_t i = 0; i < n; ++i)
    params += (i ? ", void* arg" : "void* arg") + std::to_string(i);
  return "int32_t " + callee.name + "(" + (n ? params : "void") + ");";
}

void emit_kernel(CWriter& w, const Callee& callee, const Options& options) {
  const bool packed = options.api == Options::Api::kPacked;
  const std::size_t n_in = callee.inputs.size();
  const std::size_t n = n_in + callee.outputs.size();
  const auto in_names = numbered("in", n_in);
  const auto out_names = numbered("out", callee.outputs.size());
  std::string proto = callee_prototype(callee, options);
  proto.pop_back();  // the ';'
  w.line("/* host kernel " + comment_text(callee.name) + ": " + count_of(n_in, "input") + ", " +
         count_of(callee.outputs.size(), "output") + " */");
  w.open(proto);
  if (packed) {
    w.line("AOTFUZZ_TRACE_CALL(\"" + callee.name + "\", num_args);");
    w.line("AOTFUZZ_FAULT_POINT();");
    if (options.check_num_args) {
      w.line("if (num_args != " + std::to_string(n) + ") return -1;");
    }
    for (std::size_t i = 0; i < n; ++i) {
      emit_argument_check(w, callee.name, i,
                          i < n_in ? callee.inputs[i] : callee.outputs[i - n_in]);
    }
    w.line("(void)type_codes;");
    w.line("(void)num_args;");
    w.line("(void)ret;");
    w.line("(void)ret_code;");
    w.line("(void)resource;");
  } else {
    w.line("AOTFUZZ_FAULT_POINT();");
  }
  for (std::size_t i = 0; i < n; ++i) {
    const bool is_in = i < n_in;
    const auto& type = is_in ? callee.inputs[i] : callee.outputs[i - n_in];
    const std::string ct(c_type(type->dtype()));
    const std::string ptr = is_in ? "const " + ct + "*" : ct + "*";
    const std::string source = packed
                                   ? "(((DLTensor*)args[" + std::to_string(i) + "].v_handle)->data)"
                                   : "arg" + std::to_string(i);
    w.line(ptr + " " + (is_in ? in_names[i] : out_names[i - n_in]) + " = (" + ptr + ")" + source +
           ";");
  }
  CWriter body(1);
  std::vector<bool> used;
  emit_elementwise_body(body, callee.fn, in_names, out_names, "kernel " + callee.name, used);
  for (std::size_t i = 0; i < n_in; ++i) {
    if (!used[i]) w.line("(void)" + in_names[i] + ";");
  }
  w.raw(body.str());
  w.line("return 0;");
  w.close();
  w.line();
}

}  // namespace aotfuzz::aot::detail

// The AoT executor `tvmgen_<mod>_run_model`: every call of @main in topological order, packed
// calls through the shared stack_value/stack_tcode arrays (as TVM v0.8's AoT executor emits them)
// or direct calls in the unpacked API, then the copies into repeated and pass-through outputs.
// Printed from the ExecutorProgram (aot/executor_program.h), which carries the bug switches.
#include <algorithm>
#include <map>
#include <set>

#include "aot/codegen.h"
#include "aot/codegen_internal.h"
#include "aot/executor_program.h"

namespace aotfuzz::aot::detail {
namespace {

std::string buffer_name(const BufferRef& ref) {
  switch (ref.kind) {
    case BufferKind::kInput:
      return "input_" + std::to_string(ref.index);
    case BufferKind::kOutput:
      return "output_" + std::to_string(ref.index);
    case BufferKind::kConstant:
      return "constant_" + std::to_string(ref.index);
    case BufferKind::kIntermediate:
      break;
  }
  return "sid_" + std::to_string(ref.index);
}

// How a statement names a buffer: constants are read-only arrays passed as `void*`, as TVM
// passes its linked parameters.
std::string buffer_arg(const BufferRef& ref, const std::string& prefix) {
  if (ref.kind == BufferKind::kConstant) return "(void*)" + prefix + "_" + buffer_name(ref);
  return buffer_name(ref);
}

}  // namespace

std::string executor_prototype(const StoragePlan& plan, const Options& options) {
  std::string params;
  for (std::size_t i = 0; i < plan.inputs.size() + plan.outputs.size(); ++i) {
    if (!params.empty()) params += ", ";
    params += i < plan.inputs.size() ? "void* input_" + std::to_string(i)
                                     : "void* output_" + std::to_string(i - plan.inputs.size());
  }
  return "int32_t " + symbol_prefix(options) + "_run_model(" + (params.empty() ? "void" : params) +
         ")";
}

void emit_executor(CWriter& w, const StoragePlan& plan, const std::vector<const Callee*>& callees,
                   const Options& options) {
  // The call sequence is built as data first (bug switches included), then printed; the plan
  // interpreter runs the same data.
  const ExecutorProgram program = executor_program(plan, callees, options);
  const std::string prefix = symbol_prefix(options);
  std::set<std::string> used;                       // buffer names referenced by some statement
  std::map<std::vector<std::int64_t>, int> shapes;  // shape -> static array index
  std::vector<const std::vector<std::int64_t>*> shape_order;
  std::vector<std::size_t> dl_count(program.calls.size(), 0);
  const std::size_t stack_size = program.stack_size;

  CWriter calls(1);
  for (std::size_t s = 0; s < program.calls.size(); ++s) {
    const ExecutorCall& call = program.calls[s];
    std::vector<std::string> names;
    for (const auto& slot : call.slots) {
      names.push_back(buffer_arg(slot.buffer, prefix));
      used.insert(buffer_name(slot.buffer));
    }

    calls.line("/* call " + std::to_string(s) + ": " + comment_text(call.callee) + " */");
    if (call.packed) {
      dl_count[s] = std::max<std::size_t>(names.size(), 1);
      const std::string dl = "call_" + std::to_string(s) + "_dl";
      for (std::size_t k = 0; k < names.size(); ++k) {
        const auto& type = call.slots[k].type;
        std::string shape_ptr = "NULL";
        if (!type->shape().empty()) {
          auto [it, fresh] = shapes.emplace(type->shape(), static_cast<int>(shapes.size()));
          if (fresh) shape_order.push_back(&it->first);
          shape_ptr = prefix + "_shape_" + std::to_string(it->second);
        }
        const std::string slot = std::to_string(k);
        if (!call.describes_intermediates &&
            call.slots[k].buffer.kind == BufferKind::kIntermediate) {
          // Bug #10374: the rest of the descriptor is whatever the stack held.
          calls.line(dl + "[" + slot + "].data = " + names[k] + ";");
        } else {
          calls.line(prefix + "_set_tensor(&" + dl + "[" + slot + "], " + names[k] + ", " +
                     std::to_string(type->shape().size()) + ", " + shape_ptr + ", " +
                     dtype_code(type->dtype()) + ", " + dtype_bits(type->dtype()) + ");");
        }
        calls.line("stack_value[" + slot + "].v_handle = &" + dl + "[" + slot + "];");
        calls.line("stack_tcode[" + slot + "] = kTVMDLTensorHandle;");
      }
      calls.line("if (" + call.callee + "((TVMValue*) stack_value, (int*) stack_tcode, " +
                 std::to_string(names.size()) + ", &ret_val, &ret_tcode, NULL) != 0) return -1;");
    } else {
      std::string list;
      for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
      if (call.checks_return) {
        calls.line("if (" + call.callee + "(" + list + ") != 0) return -1;");
      } else {
        // Bug #10424: the return code is dropped, as TVM's unpacked calls did.
        calls.line("(void)" + call.callee + "(" + list + ");");
      }
    }
  }
  for (const auto& copy : program.copies) {
    const std::string dst = buffer_name({BufferKind::kOutput, copy.output});
    const std::string src = buffer_arg(copy.source.buffer, prefix);
    used.insert(dst);
    used.insert(buffer_name(copy.source.buffer));
    calls.line("memcpy(" + dst + ", " + src + ", " +
               std::to_string(tensor_bytes(copy.source.type)) + ");");
  }
  if (!program.buffers.empty()) {
    calls.line("if (TVMBackendFreeWorkspace(kDLCPU, 0, workspace) != 0) return -1;");
  }
  calls.line("return 0;");

  const bool any_packed = stack_size > 0;
  // Only the constants a statement reads: an unused static array is a warning.
  bool any_constant = false;
  for (std::size_t k = 0; k < program.constants.size(); ++k) {
    const BufferRef ref{BufferKind::kConstant, static_cast<int>(k)};
    if (!used.count(buffer_name(ref))) continue;
    w.line(constant_definition(prefix + "_" + buffer_name(ref), *program.constants[k]));
    any_constant = true;
  }
  if (any_constant) w.line();
  for (std::size_t i = 0; i < shape_order.size(); ++i) {
    std::string dims;
    for (std::int64_t d : *shape_order[i]) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
    w.line("static int64_t " + prefix + "_shape_" + std::to_string(shapes.at(*shape_order[i])) +
           "[" + std::to_string(shape_order[i]->size()) + "] = {" + dims + "};");
  }
  if (!shape_order.empty()) w.line();
  if (any_packed) {
    w.open("static void " + prefix +
           "_set_tensor(DLTensor* t, void* data, int32_t ndim, int64_t* shape, uint8_t code, "
           "uint8_t bits)");
    w.line("t->data = data;");
    w.line("t->device.device_type = kDLCPU;");
    w.line("t->device.device_id = 0;");
    w.line("t->ndim = ndim;");
    w.line("t->dtype.code = code;");
    w.line("t->dtype.bits = bits;");
    w.line("t->dtype.lanes = 1;");
    w.line("t->shape = shape;");
    w.line("t->strides = NULL;");
    w.line("t->byte_offset = 0;");
    w.close();
    w.line();
  }

  w.line("/* The AoT executor: " + std::to_string(program.calls.size()) + " calls in topological " +
         "order, " + std::to_string(program.buffers.size()) + " workspace buffers. */");
  w.open(executor_prototype(plan, options));
  if (any_packed) {
    w.line("TVMValue stack_value[" + std::to_string(stack_size) + "];");
    w.line("int stack_tcode[" + std::to_string(stack_size) + "];");
    w.line("TVMValue ret_val;");
    w.line("int ret_tcode;");
    for (std::size_t s = 0; s < program.calls.size(); ++s) {
      if (dl_count[s] == 0) continue;
      w.line("DLTensor call_" + std::to_string(s) + "_dl[" + std::to_string(dl_count[s]) + "];");
    }
  }
  if (!program.buffers.empty()) {
    // Offsets are multiples of the plan's alignment; the allocator aligns the base.
    w.line("uint8_t* workspace = (uint8_t*)TVMBackendAllocWorkspace(kDLCPU, 0, " +
           std::to_string(program.workspace_bytes) + ", kDLInt, 8);");
    w.line("if (workspace == NULL) return -1;");
    for (const auto& b : program.buffers) {
      w.line("void* sid_" + std::to_string(b.sid) + " = workspace + " + std::to_string(b.offset) +
             ";");
    }
  }
  for (std::size_t i = 0; i < program.inputs.size(); ++i) {
    const std::string n = buffer_name({BufferKind::kInput, static_cast<int>(i)});
    if (!used.count(n)) w.line("(void)" + n + ";");
  }
  for (std::size_t i = 0; i < program.outputs.size(); ++i) {
    const std::string n = buffer_name({BufferKind::kOutput, static_cast<int>(i)});
    if (!used.count(n)) w.line("(void)" + n + ";");
  }
  if (any_packed) {
    // Zeroed so that a stale slot read before any call wrote it is a NULL handle, not garbage.
    w.line("memset(stack_value, 0, sizeof(stack_value));");
    w.line("memset(stack_tcode, 0, sizeof(stack_tcode));");
    w.line("ret_tcode = 0;");
    w.line("ret_val.v_int64 = 0;");
    for (std::size_t s = 0; s < program.calls.size(); ++s) {
      if (dl_count[s] == 0) continue;
      const std::string dl = "call_" + std::to_string(s) + "_dl";
      w.line("AOTFUZZ_POISON(" + dl + ", sizeof(" + dl + "));");
    }
  }
  w.raw(calls.str());
  w.close();
  w.line();
}

}  // namespace aotfuzz::aot::detail

// The pytest writer: one Python statement per IR node, in post order, for Relay and for NumPy.
#include "tvm/pytest_export.h"

#include <cstdio>
#include <regex>
#include <set>
#include <unordered_map>

#include "ir/traversal.h"
#include "tvm/driver.h"

namespace aotfuzz::tvm {
namespace {

const std::set<std::string>& reserved_names() {
  static const std::set<std::string> kNames = {
      // Python keywords and builtins the file uses.
      "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
      "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if",
      "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try",
      "while", "with", "yield", "len", "list", "tuple", "print", "zip", "range", "isinstance",
      // Names the generated file defines or imports.
      "np", "tvm", "relay", "transform", "pytest", "sys", "OrderedDict", "compiler_begin",
      "compiler_end", "begin", "end", "inputs", "annotate", "params", "result", "AOTTestModel",
      "AOT_DEFAULT_RUNNER", "compile_and_run", "flatten", "expected", "named_outputs", "UMA_TARGET",
      "UMA_REGIONS", "uma_target", "_uma_targets"};
  return kNames;
}

bool is_identifier(const std::string& s) {
  if (s.empty() || (s[0] >= '0' && s[0] <= '9')) return false;
  for (char c : s) {
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  return true;
}

// Python identifiers for parameters: the IR name when usable, made unique, never `v<n>`.
class Names {
 public:
  std::string take(const std::string& hint) {
    std::string base;
    for (char c : hint) {
      const bool ok =
          (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
      base += ok ? c : '_';
    }
    if (!is_identifier(base) || reserved_names().count(base) || looks_like_value(base)) {
      base = "in_" + base;
    }
    std::string name = base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }

 private:
  static bool looks_like_value(const std::string& s) {
    return s.size() > 1 && s[0] == 'v' && s.find_first_not_of("0123456789", 1) == std::string::npos;
  }
  std::set<std::string> used_;
};

std::string py_str(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '\\' || c == '"') {
      out += '\\';
      out += c;
    } else if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", static_cast<unsigned char>(c));
      out += buf;
    } else {
      out += c;
    }
  }
  return out + "\"";
}

std::string py_shape(const std::vector<std::int64_t>& shape) {
  std::string out = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ", ";
    out += std::to_string(shape[i]);
  }
  if (shape.size() == 1) out += ",";
  return out + ")";
}

std::string sanitize_test_name(const std::string& s) {
  std::string out;
  for (char c : s) {
    const bool ok =
        (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    out += ok ? c : '_';
  }
  return out.empty() ? "repro" : out;
}

// One flattened tensor input of the test.
struct FlatInput {
  std::string py;    // Python variable
  std::string hint;  // relay.var name (the inputs dict key)
  ir::Type type;
};

// Expression building a (possibly nested) tuple parameter from its flattened fields.
std::string tuple_param_expr(const ir::Type& type, std::vector<FlatInput>::const_iterator& it,
                             bool relay) {
  if (type->is_tensor()) return (it++)->py;
  std::string out = relay ? "relay.Tuple([" : "(";
  for (std::size_t i = 0; i < type->fields().size(); ++i) {
    if (i) out += ", ";
    out += tuple_param_expr(type->fields()[i], it, relay);
  }
  if (!relay && type->fields().size() == 1) out += ",";
  return out + (relay ? "])" : ")");
}

// The graph of @main in two Python forms: Relay (with annotations as begin/end) and NumPy.
struct PytestGraph {
  std::string relay_params, relay_tuples, numpy_params, numpy_tuples, shapes;
  std::string relay_body, numpy_body;
  std::string result, param_list;
  /// A region goes to the driver's UMA backend (compiler="aotfuzz_uma").
  bool uma = false;
};

PytestGraph translate_graph(const ir::Function& main) {
  PytestGraph g;
  Names names;
  std::vector<FlatInput> flat;
  std::unordered_map<const ir::ExprNode*, std::string> py;  // node -> Python variable
  for (const auto& p : main->params()) {
    if (p->type()->is_tensor()) {
      std::string n = names.take(p->name());
      flat.push_back({n, p->name(), p->type()});
      py[p.get()] = n;
      continue;
    }
    const auto tensors = ir::flatten_tensors(p->type());
    const std::size_t first = flat.size();
    for (std::size_t k = 0; k < tensors.size(); ++k) {
      std::string hint = p->name() + "_" + std::to_string(k);
      flat.push_back({names.take(hint), hint, tensors[k]});
    }
    std::string n = names.take(p->name());
    py[p.get()] = n;
    auto it = flat.cbegin() + static_cast<std::ptrdiff_t>(first);
    g.relay_tuples += "    " + n + " = " + tuple_param_expr(p->type(), it, true) + "\n";
    it = flat.cbegin() + static_cast<std::ptrdiff_t>(first);
    g.numpy_tuples += "    " + n + " = " + tuple_param_expr(p->type(), it, false) + "\n";
  }
  for (const auto& in : flat) {
    const std::string dtype(ir::dtype_name(in.type->dtype()));
    g.relay_params += "    " + in.py + " = relay.var(" + py_str(in.hint) +
                      ", shape=" + py_shape(in.type->shape()) + ", dtype=" + py_str(dtype) + ")\n";
    g.numpy_params += "    " + in.py + " = inputs[" + py_str(in.hint) + "]\n";
    g.shapes += "        (" + py_str(in.hint) + ", (" + py_shape(in.type->shape()) + ", " +
                py_str(dtype) + ")),\n";
  }

  int counter = 0;
  for (const auto& node : ir::post_order(main->body())) {
    if (node->kind() == ir::ExprKind::kVar) {
      if (!py.count(node.get())) throw PytestError("free variable " + ir::describe(*node));
      continue;
    }
    auto arg = [&](const ir::Expr& e) { return py.at(e.get()); };
    std::string v = "v";
    v += std::to_string(counter++);
    std::string relay_expr, numpy_expr;
    if (const auto* call = ir::as<ir::CallNode>(node)) {
      if (!call->op())
        throw PytestError("calls of functions are not supported: " + ir::describe(*node));
      const ir::Op op = *call->op();
      if (ir::is_annotation(op)) {
        const std::string fn = op == ir::Op::kCompilerBegin ? "begin" : "end";
        const std::string target = ir::annotation_target(node.get()).value_or("");
        g.uma = g.uma || target == kUmaTarget;
        relay_expr = fn + "(" + arg(call->args()[0]) + ", " + py_str(target) + ")";
        numpy_expr = arg(call->args()[0]);
      } else {
        const std::string name(ir::op_name(op));
        relay_expr =
            "relay." + name + "(" + arg(call->args()[0]) + ", " + arg(call->args()[1]) + ")";
        numpy_expr = "np." + name + "(" + arg(call->args()[0]) + ", " + arg(call->args()[1]) + ")";
      }
    } else if (const auto* tup = ir::as<ir::TupleNode>(node)) {
      std::string fields;
      for (std::size_t i = 0; i < tup->fields().size(); ++i) {
        if (i) fields += ", ";
        fields += arg(tup->fields()[i]);
      }
      relay_expr = "relay.Tuple([" + fields + "])";
      numpy_expr = "(" + fields + (tup->fields().size() == 1 ? ",)" : ")");
    } else if (const auto* c = ir::as<ir::ConstantNode>(node)) {
      std::string values;
      for (std::size_t i = 0; i < c->values().size(); ++i) {
        values += (i ? ", " : "") + std::to_string(c->values()[i]);
      }
      numpy_expr = "np.array([" + values +
                   "], dtype=" + py_str(std::string(ir::dtype_name(c->type()->dtype()))) +
                   ").reshape(" + py_shape(c->type()->shape()) + ")";
      relay_expr = "relay.const(" + numpy_expr + ")";
    } else if (const auto* tgi = ir::as<ir::TupleGetItemNode>(node)) {
      relay_expr =
          "relay.TupleGetItem(" + arg(tgi->tuple()) + ", " + std::to_string(tgi->index()) + ")";
      numpy_expr = arg(tgi->tuple()) + "[" + std::to_string(tgi->index()) + "]";
    } else {
      throw PytestError(
          "only annotated graphs of ops, constants, tuples and TupleGetItems are supported, not " +
          ir::describe(*node));
    }
    py[node.get()] = v;
    g.relay_body += "    " + v + " = " + relay_expr + "\n";
    g.numpy_body += "    " + v + " = " + numpy_expr + "\n";
  }
  g.result = py.at(main->body().get());
  for (std::size_t i = 0; i < flat.size(); ++i) g.param_list += (i ? ", " : "") + flat[i].py;

  return g;
}

}  // namespace

std::string without_local_paths(const std::string& note) {
  // A TVM build's directory is this machine's: the variable names it on any machine.
  static const std::regex kHome(R"((--tvm(-fixed)?-home)(=| +)('[^']*'|"[^"]*"|[^ ]+))");
  std::string out = std::regex_replace(note, kHome, "$1$3\"$$AOTFUZZ_TVM_HOME\"");
  // `aotfuzz run /home/me/findings/x/reduced.relay`: the file's name is what travels.
  static const std::regex kRunPath(R"((aotfuzz run +)('[^']*/([^'/]*)'|/[^ ]*/([^ /]*)))");
  return std::regex_replace(out, kRunPath, "$1$3$4");
}

namespace {

// The file's opening comments and imports.
std::string preamble(const oracle::CaseOptions& options, const PytestInfo& info) {
  std::string notes;
  for (const auto& n : info.notes) notes += "# " + without_local_paths(n) + "\n";

  std::string out;
  out +=
      "# Generated by `aotfuzz show --tvm-pytest`: a self-contained repro in the style of TVM's\n";
  out +=
      "# tests/python/relay/aot/test_crt_aot.py::test_byoc_microtvm (TVM v0.8). Put it next to\n";
  out += "# test_crt_aot.py (it uses aot_test_utils from there) and run it with pytest.\n";
  out += notes;
  if (options.aot.bugs.any()) {
    out += "# Note: aotfuzz found this with an injected bug; TVM itself may well pass it.\n";
  }
  if (!options.aot.storage_reuse) {
    out +=
        "# Note: aotfuzz ran it without storage reuse, which TVM's AoT build has no switch for.\n";
  }
  out += R"(from collections import OrderedDict
import sys

import numpy as np
import pytest

import tvm
from tvm import relay
from tvm.relay import transform
from tvm.relay.op.annotation import compiler_begin, compiler_end

try:  # TVM v0.8: the AoT helpers live next to test_crt_aot.py
    from aot_test_utils import AOTTestModel, AOT_DEFAULT_RUNNER, compile_and_run
except ImportError:  # later TVM releases moved them into the package
    from tvm.testing.aot import AOTTestModel, compile_and_run
    from tvm.micro.testing.aot_test_utils import AOT_DEFAULT_RUNNER

)";
  return out;
}

std::string py_bool(bool b) { return b ? "True" : "False"; }

// The AoT executor's memory configuration, exactly as the driver builds it (tvm/driver.py), so
// that the file builds what the campaign built on every release (TVM's own default runner turns
// USMP on from v0.12.0: left to it, a case built without USMP would not reproduce).
std::string memory_settings(const oracle::MemoryOptions& m) {
  std::string out;
  out += "# The AoT executor's memory configuration aotfuzz built with (build_as_aotfuzz).\n";
  out += "USMP = " + py_bool(m.usmp) + "\n";
  out += "USMP_ALGORITHM = " + py_str(m.usmp_algorithm) + "\n";
  out += "EXTERNAL_POOLS = " + py_bool(m.pools == oracle::MemoryOptions::Pools::kExternal) + "\n";
  out += "USE_WORKSPACE_IO = " + py_bool(m.workspace_io) + "\n";
  out += "WORKSPACE_BYTE_ALIGNMENT = " + std::to_string(m.workspace_alignment) + "\n";
  out += "CONSTANT_BYTE_ALIGNMENT = " + std::to_string(m.constant_alignment) + "\n";
  out += "LINK_PARAMS = " + py_bool(m.link_params) + "\n";
  return out;
}

// The module-level constants: pass options and the inputs' shapes.
std::string settings(const oracle::CaseOptions& options, const PytestGraph& g) {
  const bool unpacked = options.aot.api == aot::Options::Api::kUnpacked;
  const bool c_interface = options.aot.interface == aot::Options::Interface::kC;
  std::string out;
  out += "MERGE_COMPILER_REGIONS = " + std::string(options.aot.merge ? "True" : "False") + "\n";
  out += "MOD_NAME = " + py_str(options.aot.mod_name) + "\n";
  out += "INTERFACE_API = " + py_str(c_interface ? "c" : "packed") + "\n";
  out += "USE_UNPACKED_API = " + std::string(unpacked ? "True" : "False") + "\n";
  out += "# FuseOps' limit on operators per fused function (relay.FuseOps.max_depth).\n";
  out += "FUSE_MAX_DEPTH = " + std::to_string(options.aot.max_fuse_depth) + "\n";
  out += "# Regions for aotfuzz's UMA backend (TVM v0.10.0 on, built with USE_UMA ON).\n";
  out += "UMA_REGIONS = " + py_bool(g.uma) + "\n";
  out += memory_settings(options.memory);
  out += "# Every input of @main (tuple parameters flattened): name -> (shape, dtype).\n";
  out += "INPUTS = OrderedDict(\n    [\n" + g.shapes + "    ]\n)\n\n\n";
  // The backend exactly as the driver defines it, so that TVM's developers need no aotfuzz.
  if (g.uma) out += std::string(uma_backend_source()) + "\n\n";
  return out;
}

// build_graph (Relay) and numpy_reference.
std::string graph_functions(const PytestGraph& g) {
  std::string out;
  out += "def build_graph(annotate):\n";
  out +=
      "    \"\"\"The graph; with annotate=False the compiler_begin/compiler_end are left "
      "out.\"\"\"\n";
  out += "    begin = compiler_begin if annotate else (lambda expr, target: expr)\n";
  out += "    end = compiler_end if annotate else (lambda expr, target: expr)\n";
  out += g.relay_params + g.relay_tuples + g.relay_body;
  out += "    return relay.Function([" + g.param_list + "], " + g.result + ")\n\n\n";

  out += "def numpy_reference(inputs):\n";
  out +=
      "    \"\"\"The same graph in NumPy (annotations are identities), outputs flattened.\"\"\"\n";
  out += g.numpy_params + g.numpy_tuples + g.numpy_body;
  out += "    return flatten(" + g.result + ")\n\n\n";

  return out;
}

// Helpers every generated file shares: flatten, make_inputs, interpreter_reference.
std::string helper_functions() {
  std::string out;
  out += R"(def flatten(value):
    """Tensors of a (nested) tuple value, depth first, as NumPy arrays."""
    if isinstance(value, np.ndarray):
        return [value]
    if isinstance(value, tvm.nd.NDArray):
        return [value.numpy()]
    result = []
    for field in value:
        result.extend(flatten(field))
    return result


def named_outputs(expected):
    """The expected outputs as this release's AOTTestModel takes them: a list up to the releases
    that key them by TVM's output names, "output" or "output0", "output1", ... (v0.18.0)."""
    import typing

    hint = typing.get_type_hints(AOTTestModel).get("outputs")
    if getattr(hint, "__origin__", None) is not dict:
        return expected
    if len(expected) == 1:
        return OrderedDict([("output", expected[0])])
    return OrderedDict(("output%d" % i, value) for i, value in enumerate(expected))


def make_inputs():
    rng = np.random.RandomState(9036)
    inputs = OrderedDict()
    for name, (shape, dtype) in INPUTS.items():
        if dtype == "float32":
            inputs[name] = rng.uniform(-8.0, 8.0, size=shape).astype(dtype)
        else:
            inputs[name] = rng.randint(-100, 100, size=shape).astype(dtype)
    return inputs


def interpreter_reference(inputs):
    """The Relay interpreter on the graph without annotations."""
    mod = tvm.IRModule.from_expr(build_graph(annotate=False))
    mod = transform.InferType()(mod)
    run = relay.create_executor("debug", mod=mod, device=tvm.cpu(0), target="llvm").evaluate()
    return flatten(run(*inputs.values()))


)";
  return out;
}

// How the file builds from v0.9 on: relay.build with the driver's exact pass config and executor.
std::string build_functions() {
  return R"(def executor_api():
    """Whether relay.build takes Executor and Runtime objects (v0.9.0 on)."""
    import inspect

    return "executor" in inspect.signature(relay.build).parameters


def pass_config():
    """The PassContext aotfuzz built with; a key this release lacks is one it cannot set."""
    known = tvm.transform.PassContext.list_configs()
    config = {"tir.disable_vectorize": True}
    if "relay.FuseOps.max_depth" in known:
        config["relay.FuseOps.max_depth"] = FUSE_MAX_DEPTH
    if "tir.usmp.enable" in known:
        config["tir.usmp.enable"] = USMP
    if USMP:
        config["tir.usmp.algorithm"] = USMP_ALGORITHM
        if USE_WORKSPACE_IO:
            config["tir.usmp.use_workspace_io"] = True
    return config


def pool_prologue(factory, inputs):
    """What TVM's own USMP tests (test_crt_aot_usmp.py) put at the start of main when the
    application owns the pools (C interface): each external pool's array, a constant pool filled
    from its header's data macro, and with workspace-io the pools' struct, the inputs copied in
    through map_inputs and the outputs mapped by map_outputs (run_and_check emits neither then)."""
    if INTERFACE_API != "c" or not (EXTERNAL_POOLS or USE_WORKSPACE_IO):
        return ""
    import re

    prefix = "tvmgen_" + MOD_NAME + "_"
    text = ""
    members = []
    metadata = factory.executor_codegen_metadata
    for allocated in dict(metadata.pool_inputs).values():
        info = allocated.pool_info
        if info.is_internal:
            continue
        name = info.pool_name
        macro = (prefix + name).upper()
        if isinstance(info, tvm.ir.memory_pools.ConstantPoolInfo):
            text += "__attribute__((aligned(%d))) static uint8_t %s[%s_CONSTANT_POOL_SIZE] = %s;\n" % (
                CONSTANT_BYTE_ALIGNMENT, name, macro, macro + "_CONSTANT_POOL_DATA")
        else:
            text += "__attribute__((aligned(%d))) static uint8_t %s[%s_WORKSPACE_POOL_SIZE];\n" % (
                WORKSPACE_BYTE_ALIGNMENT, name, macro)
        members.append(name)
    if USE_WORKSPACE_IO:
        pools = prefix + "workspace_pools"
        text += "struct %s %s = { %s };\n" % (
            pools, pools, ", ".join(".%s = %s" % (m, m) for m in members))
        text += "struct %sinputs %sinputs = %smap_inputs(&%s);\n" % (prefix, prefix, prefix, pools)
        for name, value in inputs.items():
            field = re.sub(r"\W", "_", name)
            text += "__builtin_memcpy(%sinputs.%s, %sinput_data_%s, %d);\n" % (
                prefix, field, prefix, field, value.nbytes)
        text += "struct %soutputs %soutputs = %smap_outputs(&%s);\n" % (
            prefix, prefix, prefix, pools)
    return text


def build_as_aotfuzz(mod, config):
    """relay.build as aotfuzz's TVM driver calls it for this case."""
    from tvm.relay.backend import Executor, Runtime

    options = {
        "interface-api": INTERFACE_API,
        "unpacked-api": USE_UNPACKED_API,
        "link-params": LINK_PARAMS,
        "workspace-byte-alignment": WORKSPACE_BYTE_ALIGNMENT,
    }
    if "constant-byte-alignment" in Executor.list_registered_options("aot"):
        options["constant-byte-alignment"] = CONSTANT_BYTE_ALIGNMENT
    # UMA's functions are lowered for their own target, which relay.build wants after the host's.
    targets = [tvm.target.Target("c")]
    if UMA_REGIONS:
        targets.append(uma_target())
    pools = {}
    if EXTERNAL_POOLS:
        from tvm.ir.memory_pools import WorkspaceMemoryPools, WorkspacePoolInfo

        pools["workspace_memory_pools"] = WorkspaceMemoryPools(
            [WorkspacePoolInfo("aotfuzz_workspace", targets)]
        )
    with tvm.transform.PassContext(opt_level=3, config=config):
        return relay.build(
            mod,
            target=targets if UMA_REGIONS else "c",
            executor=Executor("aot", options),
            runtime=Runtime("crt"),
            mod_name=MOD_NAME,
            **pools,
        )


)";
}

// The test itself and the script entry point.
std::string test_function(const PytestInfo& info) {
  std::string out;
  out += "def test_aotfuzz_" + sanitize_test_name(info.name) + "():\n";
  out += R"(    if UMA_REGIONS and tvm.get_global_func(
        "relay.backend.contrib.uma.RegisterTarget", allow_missing=True
    ) is None:
        pytest.skip("aotfuzz_uma regions need UMA: TVM v0.10.0 or later built with USE_UMA ON")
    inputs = make_inputs()
    expected = numpy_reference(inputs)
    # The cross-check of the NumPy reference needs an LLVM build; the AoT flow below does not.
    if tvm.runtime.enabled("llvm"):
        interpreted = interpreter_reference(inputs)
        assert len(interpreted) == len(expected)
        for want, got in zip(expected, interpreted):
            np.testing.assert_allclose(got, want, rtol=1e-6)

    mod = tvm.IRModule()
    mod["main"] = build_graph(annotate=True)
    if MERGE_COMPILER_REGIONS:
        mod = transform.MergeCompilerRegions()(mod)
    mod = transform.PartitionGraph(MOD_NAME)(mod)
    mod = transform.InferType()(mod)

    model = AOTTestModel(
        name=MOD_NAME, module=mod, inputs=inputs, outputs=named_outputs(expected)
    )
    if not executor_api():
        # TVM v0.8: the executor's options are in the target string, USMP does not exist yet.
        compile_and_run(
            model,
            AOT_DEFAULT_RUNNER,
            INTERFACE_API,
            USE_UNPACKED_API,
            workspace_byte_alignment=WORKSPACE_BYTE_ALIGNMENT,
        )
        return
    try:
        from tvm.testing.aot import AOTCompiledTestModel, AOTTestRunner, run_and_check
    except ImportError:
        from aot_test_utils import AOTCompiledTestModel, AOTTestRunner, run_and_check
    config = pass_config()
    factory = build_as_aotfuzz(mod, config)
    run_kwargs = dict(
        workspace_byte_alignment=WORKSPACE_BYTE_ALIGNMENT,
        constant_byte_alignment=CONSTANT_BYTE_ALIGNMENT,
    )
    if USE_WORKSPACE_IO:
        run_kwargs["use_workspace_io"] = True
    run_and_check(
        [AOTCompiledTestModel(model=model, executor_factory=factory)],
        AOTTestRunner(pass_config=config, prologue=pool_prologue(factory, inputs)),
        INTERFACE_API,
        **run_kwargs,
    )


if __name__ == "__main__":
    sys.exit(pytest.main([__file__] + sys.argv[1:]))
)";
  return out;
}

}  // namespace

std::string tvm_pytest(const ir::Module& annotated, const oracle::CaseOptions& options,
                       const PytestInfo& info) {
  if (annotated.size() != 1) {
    throw PytestError("--tvm-pytest needs an annotated module with @main only (this one has " +
                      std::to_string(annotated.size()) + " functions)");
  }
  const PytestGraph graph = translate_graph(annotated.main());
  return preamble(options, info) + settings(options, graph) + graph_functions(graph) +
         helper_functions() + build_functions() + test_function(info);
}

}  // namespace aotfuzz::tvm

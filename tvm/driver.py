# The TVM driver of `aotfuzz --sut tvm`: a long-lived worker that builds annotated graphs with
# Apache TVM's own Python API and returns what TVM made of them.
#
# Started by aotfuzz (tvm/driver.cc) as `python3 -c <this file> TVM_HOME`, one per campaign
# worker: importing TVM takes seconds, a case should take a fraction of that. The protocol is one
# JSON object per line on stdin and stdout:
#   -> {"ready": true, "tvm_version": ..., "tvm_commit": ..., "crt_dir": ...,
#       "api": "executor"|"target-string", "features": [FEATURE, ...]}   once, after import
#   <- {"graph": GRAPH, "merge": bool, "mod_name": str, "api": "packed"|"unpacked",
#       "interface": "packed"|"c", "build": bool (default true; false: stop after partitioning),
#       "memory": MEMORY (optional)}
#   -> {"ok": true, "partitioned": TEXT, "constants": [CONST, ...], "files": [[NAME, TEXT], ...],
#       "metadata": TEXT, "plan": PLAN (only when recorded), "times": {...}}
#   -> {"ok": false, "stage": "merge"|"partition"|"build"|"export", "error": TEXT,
#       "unsupported": true (only when this TVM lacks what the request needs: a toolchain error)}
# and, before each step after the first, {"progress": STEP}, so that a crash of TVM is attributed
# to the step it happened in. A batch, {"batch": [REQUEST, ...]}, is answered request by request
# in order, each answer and progress line carrying its request's "index": the graphs are built one
# after the other as separate requests would be, without a round trip between them.
# GRAPH (oracle/tvm_graph.h): {"params": [{"name", "shape", "dtype"}], "nodes": [...],
# "result": i}; a node refers to earlier nodes by index; CONST is {"shape", "dtype", "values"}.
# TEXT is TVM's own printing of the partitioned module with @main's parameters renamed
# %aotfuzz_param_<i> (in order) and each constant replaced by a free %aotfuzz_const_<k> (the k-th
# CONST): TVM prints a parameter name that is no identifier bare (`%x3:-1`) and a constant tensor
# as a reference into a metadata table, neither of which reads back. `files` are the C sources
# and headers of TVM's Model Library Format export (codegen/host/src/*.c,
# codegen/host/include/*.h) and the standalone CRT's crt_backend_api.c and crt_config.h that
# TVM's own AoT tests link with; "metadata" is that export's metadata.json as text ("" if none).
#
# FEATURE names what this TVM offers, each probed from the TVM imported (see FEATURES below):
# "usmp", "workspace_io", "usmp_plan", "external_pools", "constant_alignment", "link_params_off",
# "uma" (a graph with aotfuzz_uma regions is built with the UMA backend below; without "uma" such
# a build is refused as "unsupported").
# MEMORY (oracle::MemoryOptions, tvm/case_flow.cc memory_request) is the AoT executor's memory
# configuration: {"usmp": bool, "algorithm": "greedy_by_size"|"greedy_by_conflicts"|"hill_climb",
# "pools": "internal"|"external", "workspace_io": bool, "workspace_alignment": int,
# "constant_alignment": int, "link_params": bool, "debug_overlap": bool}. External pools are one
# workspace pool "aotfuzz_workspace" and, when the graph has constants and params are linked, one
# constant pool "aotfuzz_constants" (TVM refuses a constant pool with nothing in it), both for the
# "c" target, which the application allocates (the harness, from the C interface's header).
# Without "memory" a request is built as before it existed: USMP off (where the switch exists),
# workspace alignment 8, link-params on.
# PLAN is what USMP decided, as a recording planner registered in TVM saw it (with USMP on and
# "usmp_plan"): {"algorithm": NAME, "buffers": [{"name", "size", "alignment", "pool", "offset",
# "conflicts": [NAME, ...]}], "pools": [{"name", "internal": bool, "constant": bool,
# "size": int|null}]}: the recorder hands TVM the drawn algorithm's own answer, and a pool's size
# is the one TVM finally allocated it (the build's executor_codegen_metadata.pool_inputs; null
# when absent there). With "debug_overlap" the recorder moves the second of the first two
# conflicting buffers of one pool onto the first one's offset before TVM sees the plan (a planner
# fault the plan judge must catch); with no such pair the plan says "debug_overlap": "no
# conflicting buffers".
#
# Anything TVM prints goes to stderr: stdout carries the protocol only.
import json
import os
import re
import sys
import tarfile
import tempfile
import time
import traceback

proto = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


# The index of the batch request being answered (None: a single request).
batch_index = None


def send(obj):
    if batch_index is not None:
        obj = dict(obj, index=batch_index)
    proto.write(json.dumps(obj) + "\n")
    proto.flush()


home = sys.argv[1]
sys.path.insert(0, os.path.join(home, "python"))
os.environ.setdefault("TVM_LIBRARY_PATH", os.path.join(home, "build"))
SUPPORTED = "aotfuzz drives TVM's Relay releases v0.8.0 to v0.18.0"


def unsupported(why):
    send({"ready": False, "error": "%s: %s" % (why, SUPPORTED)})
    sys.exit(3)


try:
    import tvm
except Exception as e:  # a broken installation: aotfuzz reports a toolchain error with this
    send({"ready": False, "error": "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc(limit=3))})
    sys.exit(3)
try:
    from tvm import relay

    relay.transform.PartitionGraph
except (ImportError, AttributeError):
    unsupported("this TVM %s has no Relay (removed after v0.19.0)" % getattr(tvm, "__version__", "?"))
try:
    from tvm.micro import export_model_library_format, get_standalone_crt_dir
except ImportError:
    unsupported(
        "this TVM %s has no microTVM C runtime to export and link AoT C (removed in v0.19.0)"
        % getattr(tvm, "__version__", "?")
    )
try:
    from tvm.relay.op.annotation import compiler_begin, compiler_end
    import numpy
except Exception as e:
    send({"ready": False, "error": "%s: %s\n%s" % (type(e).__name__, e, traceback.format_exc(limit=3))})
    sys.exit(3)
if tvm.get_global_func("relay.build_module._AOTExecutorCodegen", allow_missing=True) is None:
    unsupported("this TVM %s has no AoT executor codegen (older than v0.8)" % tvm.__version__)

# What this TVM offers, probed rather than read from its version string (forks and snapshots
# between releases carry version strings that say little):
#  - executor_api: relay.build(..., executor=Executor("aot", {...}), runtime=Runtime("crt"))
#    (PR #9352, v0.9.0); before it, options in the target string ("c -runtime=c
#    --executor=aot --link-params ..."), removed in v0.10.0 (PR #12416).
#  - usmp: the unified static memory planner's switch (v0.9.0; on by default for the C runtime
#    from v0.12.0, PR #14107). Switched off, as in v0.8, where intermediates live in the
#    workspace the platform allocates: the harness provides that platform.
try:
    import inspect

    EXECUTOR_API = "executor" in inspect.signature(relay.build).parameters
except (TypeError, ValueError):
    EXECUTOR_API = False
try:
    CONFIGS = set(tvm.transform.PassContext.list_configs())
except Exception:  # a TVM without the listing
    CONFIGS = set()
USMP_KEY = "tir.usmp.enable" in CONFIGS


def _aot_options():
    """The aot executor's registered options (v0.9 on), empty where there is no executor API."""
    if not EXECUTOR_API:
        return {}
    try:
        from tvm.relay.backend import Executor

        return dict(Executor.list_registered_options("aot"))
    except Exception:
        return {}


def _external_pools():
    """Whether relay.build takes the application's memory pools (v0.10 on)."""
    try:
        from tvm.ir.memory_pools import WorkspaceMemoryPools  # noqa: F401

        return "workspace_memory_pools" in inspect.signature(relay.build).parameters
    except Exception:
        return False


def _uma():
    """Whether this TVM has UMA (PR #12087, v0.10.0 on): its Python package is in every source
    tree, its target registration only in a libtvm built with USE_UMA ON."""
    try:
        from tvm.relay.backend.contrib.uma import UMABackend  # noqa: F401
    except Exception:
        return False
    return (
        tvm.get_global_func("relay.backend.contrib.uma.RegisterTarget", allow_missing=True)
        is not None
    )


AOT_OPTIONS = _aot_options()
# The memory configurations this TVM can build (the header's FEATURE):
#  - usmp: the planner's switch; workspace_io: inputs and outputs placed in the workspace pools
#    (PR #10189); usmp_plan: a planner of one's own by name (tir.usmp.custom_algorithm), which the
#    plan recorder needs.
#  - external_pools: pools the application allocates; constant_alignment: the executor's
#    constant-byte-alignment; link_params_off: link-params as an executor option that can be false
#    (the target string's --link-params cannot be turned off per build).
#  - uma: the Universal Modular Accelerator Interface, which lowers the regions of the
#    aotfuzz_uma backend (below) through TIR.
FEATURES = [
    name
    for name, present in (
        ("usmp", USMP_KEY),
        ("workspace_io", "tir.usmp.use_workspace_io" in CONFIGS),
        ("usmp_plan", "tir.usmp.custom_algorithm" in CONFIGS),
        ("external_pools", _external_pools()),
        ("constant_alignment", "constant-byte-alignment" in AOT_OPTIONS),
        ("link_params_off", EXECUTOR_API and "link-params" in AOT_OPTIONS),
        ("uma", _uma()),
    )
    if present
]

OPS = {"add": relay.add, "subtract": relay.subtract, "multiply": relay.multiply}

# >>> aotfuzz_uma backend (tvm/pytest_export.cc copies this block into every exported test)
# The project's UMA backend: regions annotated compiler="aotfuzz_uma" are lowered to TIR by
# UMA's RelayToTIR target hook (its default lowering: LowerToTE, te.create_prim_func, tvm.lower)
# and compiled to C by UMA's codegen, with no LLVM: the other path of BYOC than the ccompiler's.
# PartitionGraph gives each region Compiler="aotfuzz_uma", the name of the target kind UMA
# registers, and that is how the hook finds it (the patterns serve UMA's own partitioner only).
# relay.build needs the target after "c": [Target("c"), Target("aotfuzz_uma")].
UMA_TARGET = "aotfuzz_uma"
_uma_targets = []


def uma_target():
    """The backend's Target, the backend defined and registered on first use: a target kind is
    registered once per process (TVM refuses a second registration)."""
    if not _uma_targets:
        from tvm.relay.backend.contrib.uma import UMABackend
        from tvm.relay.dataflow_pattern import is_op, wildcard

        class AotfuzzUmaBackend(UMABackend):
            def __init__(self):
                super().__init__()
                for op in ("add", "subtract", "multiply"):
                    self._register_pattern(op, is_op(op)(wildcard(), wildcard()))

            @property
            def target_name(self):
                return UMA_TARGET

        AotfuzzUmaBackend().register()  # skips a target kind that exists
        _uma_targets.append(tvm.target.Target(UMA_TARGET))
    return _uma_targets[0]


# <<< aotfuzz_uma backend
NO_UMA = (
    "aotfuzz_uma regions need UMA: TVM v0.10.0 or later built with USE_UMA ON "
    "(scripts/tvm/build.sh does from v0.10.0); this TVM %s has none"
)


class Unsupported(Exception):
    """A request this TVM cannot build for want of a feature: a toolchain error, never a finding."""


def uses_uma(graph):
    return any(node.get("compiler") == UMA_TARGET for node in graph["nodes"])


def build_function(graph):
    params = [
        relay.var(p["name"], shape=tuple(p["shape"]), dtype=p["dtype"]) for p in graph["params"]
    ]
    values = []
    for node in graph["nodes"]:
        kind = node["kind"]
        if kind == "param":
            value = params[node["index"]]
        elif kind == "const":
            data = numpy.array(node["values"], dtype=node["dtype"]).reshape(node["shape"])
            value = relay.const(data, dtype=node["dtype"])
        elif kind == "call" and node["op"] in OPS:
            value = OPS[node["op"]](values[node["args"][0]], values[node["args"][1]])
        elif kind == "call" and node["op"] == "annotation.compiler_begin":
            value = compiler_begin(values[node["args"][0]], node["compiler"])
        elif kind == "call" and node["op"] == "annotation.compiler_end":
            value = compiler_end(values[node["args"][0]], node["compiler"])
        elif kind == "tuple":
            value = relay.Tuple([values[i] for i in node["fields"]])
        elif kind == "get":
            value = relay.TupleGetItem(values[node["tuple"]], node["index"])
        else:
            raise ValueError("unknown node %r" % (node,))
        values.append(value)
    return relay.Function(params, values[graph["result"]])


class _Placeholders(relay.ExprMutator):
    """Replaces each constant by a free variable named after its index in `constants`."""

    def __init__(self):
        super().__init__()
        self.constants = []

    def visit_constant(self, const):
        data = const.data.numpy()
        k = len(self.constants)
        self.constants.append(
            {
                "shape": list(data.shape),
                "dtype": str(data.dtype),
                "values": [int(v) for v in data.flatten().tolist()],
            }
        )
        # No type annotation: TVM's printer would write it after the variable's first use.
        return relay.var("aotfuzz_const_%d" % k)


def printable(mod):
    """TVM's text of `mod` in the form described at the top, and the constants it stands for."""
    placeholders = _Placeholders()
    functions = {}
    for gv, func in sorted(mod.functions.items(), key=lambda item: item[0].name_hint):
        if gv.name_hint == "main":
            params = [
                relay.var("aotfuzz_param_%d" % i, type_annotation=p.type_annotation)
                for i, p in enumerate(func.params)
            ]
            body = relay.bind(func.body, dict(zip(func.params, params)))
            func = relay.Function(params, body, func.ret_type, func.type_params, func.attrs)
        functions[gv] = placeholders.visit(func)
    return tvm.IRModule(functions).astext(show_meta_data=False), placeholders.constants


def crt_config_path(crt):
    """The C runtime's configuration header TVM's own AoT tests compile with: a template in the
    standalone CRT up to v0.11, a file configured at build time from v0.12 (PR #13955)."""
    old = os.path.join(crt, "template", "crt_config-template.h")
    if os.path.exists(old):
        return old
    projects = tvm.micro.get_microtvm_template_projects("crt")
    return os.path.join(projects, "crt_config", "crt_config.h")


def crt_files():
    crt = get_standalone_crt_dir()
    out = []
    for path, name in (
        (crt_config_path(crt), "crt_config.h"),
        (os.path.join(crt, "src/runtime/crt/common/crt_backend_api.c"), "crt_backend_api.c"),
    ):
        with open(path) as f:
            out.append([name, f.read()])
    return out


# The memory configuration of a request without "memory" (the header): as before it existed.
DEFAULT_MEMORY = {
    "usmp": False,
    "algorithm": "greedy_by_size",
    "pools": "internal",
    "workspace_io": False,
    "workspace_alignment": 8,
    "constant_alignment": 16,
    "link_params": True,
    "debug_overlap": False,
}
RECORDER = "aotfuzz_record"
# What the recorder is to do for the build under way, and what it saw (one build at a time).
recording = {"armed": False, "algorithm": None, "debug_overlap": False, "plan": None}


def _record_plan(buffer_infos, memory_pressure):
    """The custom USMP algorithm: the drawn algorithm's own plan, recorded as PLAN (header)."""
    from tvm.tir import usmp

    algorithm = recording["algorithm"]
    plan = tvm.get_global_func("tir.usmp.algo." + algorithm)(buffer_infos, memory_pressure)
    allocations = {buf: plan[buf] for buf in buffer_infos}
    note = None
    if recording["debug_overlap"]:
        note = "no conflicting buffers"
        for first in buffer_infos:
            pair = [
                c
                for c in first.conflicts
                if c in allocations
                and allocations[c].pool_info.same_as(allocations[first].pool_info)
                and not c.same_as(first)
            ]
            if pair:
                # The later of the two in TVM's order moves onto the earlier one's offset.
                second = pair[0]
                allocations[second] = usmp.utils.PoolAllocation(
                    allocations[first].pool_info, int(allocations[first].byte_offset)
                )
                note = "moved %s onto %s" % (second.name_hint, first.name_hint)
                break
    recorded = {
        "algorithm": algorithm,
        "buffers": [
            {
                "name": str(buf.name_hint),
                "size": int(buf.size_bytes),
                "alignment": int(buf.alignment),
                "pool": str(allocations[buf].pool_info.pool_name),
                "offset": int(allocations[buf].byte_offset),
                "conflicts": [str(c.name_hint) for c in buf.conflicts],
            }
            for buf in buffer_infos
        ],
        "pools": [],
    }
    if note is not None:
        recorded["debug_overlap"] = note
    pools = {}
    for allocation in allocations.values():
        pools.setdefault(str(allocation.pool_info.pool_name), allocation.pool_info)
    recorded["_pool_infos"] = pools
    recording["plan"] = recorded
    return allocations


_recorder_registered = False


def _register_recorder():
    global _recorder_registered
    if not _recorder_registered:
        tvm.register_func("tir.usmp.algo." + RECORDER, _record_plan, override=True)
        _recorder_registered = True


def _is_constant_pool(pool_info):
    from tvm.ir.memory_pools import ConstantPoolInfo

    return isinstance(pool_info, ConstantPoolInfo)


def finished_plan(factory):
    """PLAN of the build just made, with the sizes TVM gave its pools; None if not recorded."""
    plan = recording["plan"]
    if plan is None and not recording["armed"]:
        return None
    if plan is None:
        # USMP ran without a buffer to place (TVM calls no algorithm then): an empty plan.
        plan = {"algorithm": recording["algorithm"], "buffers": [], "_pool_infos": {}}
        if recording["debug_overlap"]:
            plan["debug_overlap"] = "no conflicting buffers"
    pool_infos = plan.pop("_pool_infos")
    sizes = {}
    try:
        for allocated in dict(factory.executor_codegen_metadata.pool_inputs).values():
            name = str(allocated.pool_info.pool_name)
            sizes[name] = int(allocated.allocated_size)
            pool_infos.setdefault(name, allocated.pool_info)
    except Exception:  # no pool_inputs in this metadata: sizes unknown
        pass
    plan["pools"] = [
        {
            "name": name,
            "internal": bool(info.is_internal),
            "constant": _is_constant_pool(info),
            "size": sizes.get(name),
        }
        for name, info in sorted(pool_infos.items())
    ]
    return plan


def has_constants(graph):
    return any(node["kind"] == "const" for node in graph["nodes"])


def build(mod, request):
    """relay.build for the C target with the AoT executor, as this release's AoT tests call it
    (python/tvm/testing/aot.py compile_models; tests/python/relay/aot/test_crt_aot_usmp.py)."""
    unpacked = request["api"] == "unpacked"
    memory = dict(DEFAULT_MEMORY, **request.get("memory", {}))
    config = {"tir.disable_vectorize": True}
    # FuseOps' limit, as the builtin pipeline's expectations were made with it (every release
    # from the snapshot on has the key).
    if "relay.FuseOps.max_depth" in CONFIGS:
        config["relay.FuseOps.max_depth"] = int(request.get("max_fuse_depth", 256))
    recording["plan"] = None
    recording["armed"] = False
    if uses_uma(request["graph"]) and "uma" not in FEATURES:
        raise Unsupported(NO_UMA % tvm.__version__)
    if not EXECUTOR_API:
        target = (
            "c -runtime=c --link-params --executor=aot --workspace-byte-alignment=%d "
            "--interface-api=%s --unpacked-api=%d"
            % (int(memory["workspace_alignment"]), request["interface"], int(unpacked))
        )
        with tvm.transform.PassContext(opt_level=3, config=config):
            return relay.build(mod, target, target_host=target, mod_name=request["mod_name"])
    from tvm.relay.backend import Executor, Runtime

    # UMA's functions are lowered for their own target, which relay.build wants after the host's.
    uma = [uma_target()] if uses_uma(request["graph"]) else []
    options = {
        "interface-api": request["interface"],
        "unpacked-api": bool(unpacked),
        "link-params": bool(memory["link_params"]),
        "workspace-byte-alignment": int(memory["workspace_alignment"]),
    }
    if "memory" in request and "constant_alignment" in FEATURES:
        options["constant-byte-alignment"] = int(memory["constant_alignment"])
    executor = Executor("aot", options)
    if USMP_KEY:
        config["tir.usmp.enable"] = bool(memory["usmp"])
    if memory["usmp"]:
        config["tir.usmp.algorithm"] = memory["algorithm"]
        if memory["workspace_io"]:
            config["tir.usmp.use_workspace_io"] = True
        if "usmp_plan" in FEATURES:
            _register_recorder()
            recording["armed"] = True
            recording["algorithm"] = memory["algorithm"]
            recording["debug_overlap"] = bool(memory["debug_overlap"])
            config["tir.usmp.custom_algorithm"] = RECORDER
    pools = {}
    if memory["pools"] == "external":
        from tvm.ir.memory_pools import (
            ConstantMemoryPools,
            ConstantPoolInfo,
            WorkspaceMemoryPools,
            WorkspacePoolInfo,
        )

        targets = [tvm.target.Target("c")] + uma
        pools["workspace_memory_pools"] = WorkspaceMemoryPools(
            [WorkspacePoolInfo("aotfuzz_workspace", targets)]
        )
        if memory["link_params"] and has_constants(request["graph"]):
            pools["constant_memory_pools"] = ConstantMemoryPools(
                [ConstantPoolInfo("aotfuzz_constants", targets, [])]
            )
    with tvm.transform.PassContext(opt_level=3, config=config):
        return relay.build(
            mod,
            target=[tvm.target.Target("c")] + uma if uma else "c",
            executor=executor,
            runtime=Runtime("crt"),
            mod_name=request["mod_name"],
            **pools
        )


def mlf_files(factory):
    """The C files of TVM's Model Library Format export, as a user of TVM would get them, and
    its metadata.json."""
    out = []
    metadata = ""
    with tempfile.TemporaryDirectory(prefix="aotfuzz-tvm-") as tmp:
        tar_path = os.path.join(tmp, "model.tar")
        export_model_library_format(factory, tar_path)
        with tarfile.open(tar_path) as tar:
            for member in sorted(tar.getmembers(), key=lambda m: m.name):
                name = member.name.lstrip("./")
                if not member.isfile():
                    continue
                if name == "metadata.json":
                    metadata = tar.extractfile(member).read().decode()
                    continue
                if name.startswith("codegen/host/src/") and name.endswith(".c"):
                    pass
                elif name.startswith("codegen/host/include/") and name.endswith(".h"):
                    pass
                else:
                    continue
                out.append([os.path.basename(name), tar.extractfile(member).read().decode()])
    return out, metadata


def describe_error(e):
    """The error's last line first (TVM puts its backtrace before the message), the TVM source
    file that raised it as `where` (its stem: a stable bucket across cases), then the full text."""
    text = str(e).strip() or traceback.format_exc(limit=4)
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    last = lines[-1] if lines else type(e).__name__
    if not last.startswith(type(e).__name__) and ":" not in last.split(" ")[0]:
        last = "%s: %s" % (type(e).__name__, last)
    places = re.findall(r'File "([^"]+)", line (\d+)', text)
    where = os.path.splitext(os.path.basename(places[-1][0]))[0] if places else type(e).__name__
    at = " (%s:%s)" % places[-1] if places else ""
    # The message once: first, then only what came before it (the backtrace).
    before = text[: text.rfind(lines[-1])].rstrip() if lines else ""
    error = last + at + ("\n\n" + before[-8000:] if before else "")
    return {"error": error, "where": re.sub(r"[^A-Za-z0-9_-]", "_", where)}


def handle(request):
    times = {}
    stage = "merge"
    try:
        t0 = time.perf_counter()
        mod = tvm.IRModule.from_expr(build_function(request["graph"]))
        mod = relay.transform.InferType()(mod)
        if request["merge"]:
            mod = relay.transform.MergeCompilerRegions()(mod)
        stage = "partition"
        send({"progress": stage})
        mod = relay.transform.PartitionGraph(request["mod_name"])(mod)
        mod = relay.transform.InferType()(mod)
        partitioned, constants = printable(mod)
        times["partition_s"] = time.perf_counter() - t0
        shown = {"partitioned": partitioned, "constants": constants}
        if not request.get("build", True):
            return {"ok": True, **shown, "files": [], "times": times}

        stage = "build"
        send({"progress": stage})
        t1 = time.perf_counter()
        factory = build(mod, request)
        times["build_s"] = time.perf_counter() - t1

        stage = "export"
        send({"progress": stage})
        t2 = time.perf_counter()
        files, metadata = mlf_files(factory)
        files += crt_files()
        times["export_s"] = time.perf_counter() - t2
        answer = {"ok": True, **shown, "files": files, "metadata": metadata, "times": times}
        plan = finished_plan(factory)
        if plan is not None:
            answer["plan"] = plan
        return answer
    except Unsupported as e:
        return {"ok": False, "stage": stage, "unsupported": True, "error": str(e)}
    except Exception as e:  # TVMError, or Python errors of TVM's own frontend
        return {"ok": False, "stage": stage, **describe_error(e)}


def tvm_commit():
    """The commit libtvm was built from, as TVM records it at configure time; "" when unknown (a
    tarball without git metadata)."""
    try:
        commit = str(tvm.support.libinfo().get("GIT_COMMIT_HASH", ""))
    except Exception:  # a TVM without libinfo
        return ""
    return "" if commit in ("", "NOT-FOUND") or "NOTFOUND" in commit else commit


try:
    CRT_DIR = get_standalone_crt_dir()
except Exception as e:  # a build without USE_MICRO
    send({"ready": False, "error": "this TVM has no standalone C runtime (build it with USE_MICRO ON): %s" % e})
    sys.exit(3)
send(
    {
        "ready": True,
        "tvm_version": tvm.__version__,
        "tvm_commit": tvm_commit(),
        "crt_dir": CRT_DIR,
        "api": "executor" if EXECUTOR_API else "target-string",
        "features": FEATURES,
    }
)
for line in sys.stdin:
    if not line.strip():
        continue
    message = json.loads(line)
    if "batch" in message:
        for batch_index, request in enumerate(message["batch"]):
            send(handle(request))
        batch_index = None
    else:
        send(handle(message))

# A stand-in for Apache TVM v0.18.0 with its memory configurations (USMP, external pools,
# workspace-io, custom USMP algorithms), for the tests of the driver's memory requests and of
# the harness around TVM's C interface (tests/tvm/case_flow_test.cc) on machines without TVM.
# Record and replay: relay.build hands the buffers real v0.18.0 planned for the seed graph
# (../../fixture/plan.json) to the USMP algorithm the build asks for (the driver's recorder, which
# delegates to "tir.usmp.algo.<name>", here the recorded placement), and the export is the Model
# Library Format real v0.18.0 made of it (../../fixture/mlf/, see ../../fixture/README).
# Anything else is the fake TVM v0.18's (tests/tvm/fake_tvm_v018).
import contextlib
import io
import json
import os
import tarfile

_here = os.path.dirname(os.path.abspath(__file__))
_v018 = os.path.join(_here, "..", "..", "..", "fake_tvm_v018", "python", "tvm", "__init__.py")
with open(_v018) as _f:
    exec(compile(_f.read(), _v018, "exec"))
__path__.append(_here)  # noqa: F821 (the base's): ir, tir, target are this package's
__version__ = "0.18.usmp-fake"
_fixture = os.path.normpath(os.path.join(_here, "..", "..", "fixture"))

_registry = {}
_state = {"config": {}}


def register_func(name, f=None, override=False):
    if f is None:
        return lambda g: register_func(name, g, override)
    if name in _registry and not override:
        raise TVMError("Global Function `%s` is already registered" % name)  # noqa: F821
    _registry[name] = f
    return f


def _replayed_algorithm(buffer_infos, memory_pressure):
    """The placement real v0.18.0's algorithm made of the seed graph's buffers."""
    from .tir.usmp.utils import PoolAllocation

    return {b: PoolAllocation(b.pool_candidates[0], b._offset) for b in buffer_infos}


def get_global_func(name, allow_missing=False):
    if name in _registry:
        return _registry[name]
    if name.startswith("tir.usmp.algo."):
        return _replayed_algorithm
    return object()  # every other function the driver asks for exists


class _PassContext:
    def __init__(self, opt_level=2, config=None):
        self.config = dict(config or {})

    def __enter__(self):
        _state["config"] = self.config
        return self

    def __exit__(self, *exc):
        _state["config"] = {}

    @staticmethod
    def list_configs():
        return {
            "tir.disable_vectorize": "IntImm",
            "tir.usmp.enable": "IntImm",
            "tir.usmp.algorithm": "runtime.String",
            "tir.usmp.use_workspace_io": "IntImm",
            "tir.usmp.custom_algorithm": "runtime.String",
            "relay.FuseOps.max_depth": "IntImm",
        }


transform.PassContext = _PassContext  # noqa: F821 (the base's)

from . import ir  # noqa: E402
from . import target  # noqa: E402
from . import tir  # noqa: E402
from .ir.memory_pools import AllocatedPoolInfo, WorkspacePoolInfo  # noqa: E402
from .tir.usmp.utils import BufferInfo  # noqa: E402


class _Metadata:
    def __init__(self, pool_inputs):
        self.pool_inputs = pool_inputs


class _Factory:
    def __init__(self, pool_inputs):
        self.executor_codegen_metadata = _Metadata(pool_inputs)


def _build(ir_mod, target=None, target_host=None, executor=None, runtime=None,
           workspace_memory_pools=None, constant_memory_pools=None, params=None,
           mod_name="default"):
    config = _state["config"]
    if mod_name != "default" or not config.get("tir.usmp.enable"):
        raise TVMError("fake TVM v0.18 with USMP replays one build: the seed graph, module "  # noqa: F821
                       "default, USMP on (config %s)" % sorted(config.items()))
    with open(os.path.join(_fixture, "plan.json")) as f:
        recorded = json.load(f)
    pools = {}
    for p in recorded["pools"]:
        pools[p["name"]] = WorkspacePoolInfo(p["name"], [target], is_internal=p["internal"])
    buffers = {}
    for b in recorded["buffers"]:
        buffers[b["name"]] = BufferInfo(b["name"], b["size"], [pools[b["pool"]]], b["alignment"])
        buffers[b["name"]]._offset = b["offset"]
    for b in recorded["buffers"]:
        buffers[b["name"]].conflicts = [buffers[c] for c in b["conflicts"]]
    algorithm = config.get("tir.usmp.custom_algorithm") or config.get("tir.usmp.algorithm")
    get_global_func("tir.usmp.algo." + algorithm)(list(buffers.values()), 0)
    return _Factory({i: AllocatedPoolInfo(pools[p["name"]], p["size"])
                     for i, p in enumerate(recorded["pools"]) if p["size"] is not None})


relay.build = _build  # noqa: F821


def _astext(self, show_meta_data=True):
    """Real v0.18.0's printing of the partitioned seed graph, as the driver renamed it."""
    with open(os.path.join(_fixture, "partitioned.relay")) as f:
        return f.read()


IRModule.astext = _astext  # noqa: F821


def _export(factory, path):
    """The recorded Model Library Format (../../fixture/mlf) as a tar."""
    root = os.path.join(_fixture, "mlf")
    with tarfile.open(path, "w") as tar:
        for directory, _, names in sorted(os.walk(root)):
            for name in sorted(names):
                full = os.path.join(directory, name)
                tar.add(full, arcname="./" + os.path.relpath(full, root))


def _crt_dir():
    return os.path.join(_fixture, "standalone_crt")


micro.export_model_library_format = _export  # noqa: F821
micro.get_standalone_crt_dir = _crt_dir  # noqa: F821

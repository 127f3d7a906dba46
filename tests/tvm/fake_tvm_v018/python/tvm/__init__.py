# A stand-in for Apache TVM v0.9 to v0.18's Python package: the fake TVM of
# tests/tvm/fake_tvm, except that relay.build takes executor= and runtime= objects
# (tvm.relay.backend.Executor, Runtime) and says in its error how it was called, for the tests of
# the driver's API detection (tests/tvm/case_flow_test.cc) on machines without TVM.
import os

_here = os.path.dirname(os.path.abspath(__file__))
_base = os.path.join(_here, "..", "..", "..", "fake_tvm", "python", "tvm")
__path__ = [_base]
with open(os.path.join(_base, "__init__.py")) as _f:
    exec(compile(_f.read(), os.path.join(_base, "__init__.py"), "exec"))

__version__ = "0.18.fake"
relay.__path__.append(os.path.join(_here, "relay"))  # noqa: F821 (the base's relay)


def _build(ir_mod, target=None, target_host=None, executor=None, runtime=None,
           workspace_memory_pools=None, constant_memory_pools=None, params=None,
           mod_name="default"):
    raise TVMError("fake TVM v0.18 builds nothing: target=%s executor=%s runtime=%s"  # noqa: F821
                   % (target, executor, runtime))


relay.build = _build  # noqa: F821

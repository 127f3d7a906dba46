# A stand-in for Apache TVM v0.10 to v0.18 built with USE_UMA ON: the fake TVM v0.18
# (tests/tvm/fake_tvm_v018) with UMA's Python API (UMABackend, Target, the dataflow patterns) and
# its target registration, for the tests of the driver's UMA path (tests/tvm/case_flow_test.cc)
# on machines without TVM. relay.build builds nothing: its error says which targets it was given
# and how many times a UMA target kind was registered in this process.
import os

_uma_here = os.path.dirname(os.path.abspath(__file__))
_v018 = os.path.join(_uma_here, "..", "..", "..", "fake_tvm_v018", "python", "tvm", "__init__.py")
_uma_file = __file__
__file__ = _v018  # the fake v0.18 finds its base next to itself
with open(_v018) as _f:
    exec(compile(_f.read(), _v018, "exec"))
__file__ = _uma_file
__path__.insert(0, _uma_here)  # noqa: F821 (the base's): tvm.target from here

__version__ = "0.18.fake-uma"
# Target kinds UMA registered (relay.backend.contrib.uma.RegisterTarget), in order.
uma_registrations = []

from . import relay as _relay  # noqa: E402

_relay.__path__.append(os.path.join(_uma_here, "relay"))
from .relay import backend as _backend  # noqa: E402

_backend.__path__.append(os.path.join(_uma_here, "relay", "backend"))
from . import target  # noqa: E402,F401


def _build(ir_mod, target=None, target_host=None, executor=None, runtime=None,
           workspace_memory_pools=None, constant_memory_pools=None, params=None,
           mod_name="default"):
    raise TVMError(  # noqa: F821 (the base's)
        "fake TVM v0.18 with UMA builds nothing: target=%s uma_registrations=%s"
        % (target, uma_registrations)
    )


_relay.build = _build

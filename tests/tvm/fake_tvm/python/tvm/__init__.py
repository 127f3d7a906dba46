# A stand-in for Apache TVM's Python package, with only the names tvm/driver.py uses, for
# the tests of the driver's failure paths (tests/tvm/case_flow_test.cc) on machines without
# TVM. It compiles nothing: the first parameter's name or the module name of a request says how
# it fails.
#   raise_merge   (a parameter) MergeCompilerRegions raises (a TVM error at merge)
#   crash_build   relay.build aborts the process (a crash of TVM at build)
#   hang_build    relay.build never returns (a timeout)
#   no_llvm       relay.build raises as a TVM built without LLVM does when it folds constants
#   anything else relay.build raises (a TVM error at build)
import contextlib

__version__ = "0.0.fake"


class TVMError(RuntimeError):
    pass


def get_global_func(name, allow_missing=False):
    # Every registered function the driver asks for exists (the AoT codegen among them).
    return object()


class GlobalVar:
    def __init__(self, name_hint):
        self.name_hint = name_hint


class IRModule:
    def __init__(self, functions):
        self.functions = functions
        self.expr = next(iter(functions.values()))

    @staticmethod
    def from_expr(expr):
        return IRModule({GlobalVar("main"): expr})

    def astext(self, show_meta_data=True):
        return "def @main() { () }"


class transform:
    @staticmethod
    @contextlib.contextmanager
    def PassContext(opt_level=2, config=None):
        yield


from . import relay  # noqa: E402
from . import micro  # noqa: E402

# A stand-in for Apache TVM v0.9 to v0.18's Python package (relay.build takes executor= and
# runtime=), with only the names oracle/tvm/driver.py uses, for the tests of the driver's API
# detection (tests/oracle/tvm_case_test.cc) on machines without TVM. It compiles nothing: the first parameter's name or the module name of a request says how
# it fails.
#   raise_merge   (a parameter) MergeCompilerRegions raises (a TVM error at merge)
#   crash_build   relay.build aborts the process (a crash of TVM at build)
#   hang_build    relay.build never returns (a timeout)
#   no_llvm       relay.build raises as a TVM built without LLVM does when it folds constants
#   anything else relay.build raises (a TVM error at build)
import contextlib

__version__ = "0.18.fake"


class TVMError(RuntimeError):
    pass


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

# The fake relay: expressions are tuples, passes are functions (see tvm/__init__.py).
import os
import time

import tvm

from . import op  # noqa: F401

state = {"mod_name": ""}


class _Var(tuple):
    def __new__(cls, name, type_annotation):
        self = super().__new__(cls, ("var", name))
        self.type_annotation = type_annotation
        return self


def var(name, shape=None, dtype="float32", type_annotation=None):
    return _Var(name, type_annotation)


def _binary(name):
    return lambda a, b: (name, a, b)


add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")


def Tuple(fields):
    return ("tuple", tuple(fields))


def TupleGetItem(t, i):
    return ("get", t, i)


def const(data, dtype=None):
    return ("const", data)


class Function(tuple):
    def __new__(cls, params, body, ret_type=None, type_params=None, attrs=None):
        self = super().__new__(cls, ("fn", tuple(params), body))
        self.params, self.body = list(params), body
        self.ret_type, self.type_params, self.attrs = ret_type, type_params, attrs
        return self


def bind(expr, binds):
    return expr


class ExprMutator:
    def visit(self, expr):
        return expr


class transform:
    @staticmethod
    def InferType():
        return lambda mod: mod

    @staticmethod
    def MergeCompilerRegions():
        def run(mod):
            params = mod.expr[1]
            if params and params[0][1] == "raise_merge":
                raise tvm.TVMError("Check failed: fake MergeCompilerRegions refuses")
            return mod

        return run

    @staticmethod
    def PartitionGraph(mod_name):
        state["mod_name"] = mod_name
        return lambda mod: mod


def build(mod, target, target_host=None, mod_name="default"):
    if mod_name == "crash_build":
        os.abort()
    if mod_name == "hang_build":
        time.sleep(3600)
    if mod_name == "no_llvm":
        raise tvm.TVMError("Check failed: (bf != nullptr) is false: target.build.llvm is not enabled")
    if mod_name == "garbage_build":
        import __main__

        __main__.proto.write("this is no answer\n")
        __main__.proto.flush()
        time.sleep(3600)
    raise tvm.TVMError("fake TVM builds nothing (module %s)" % mod_name)

# The fake relay: expressions are tuples, passes are functions (see tvm/__init__.py).
import os
import time

import tvm

from . import op  # noqa: F401

state = {"mod_name": ""}


def var(name, shape=None, dtype="float32"):
    return ("var", name)


def _binary(name):
    return lambda a, b: (name, a, b)


add = _binary("add")
subtract = _binary("subtract")
multiply = _binary("multiply")


def Tuple(fields):
    return ("tuple", tuple(fields))


def TupleGetItem(t, i):
    return ("get", t, i)


def Function(params, body):
    return ("fn", tuple(params), body)


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
    raise tvm.TVMError("fake TVM builds nothing")

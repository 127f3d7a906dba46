#!/usr/bin/env python3
"""What several graphs in one relay.build would save: TVM's own cost of N annotated graphs built
one by one, against the same N graphs partitioned one by one and then built as one module (the
AoT executor's @main returning each graph's result), against all N partitioned and built as one.

  bench/tvm_build_batching.py TVM_HOME [--graphs 16] [--rounds 3] [--seed 1]

Run with Debian's python3 (TVM's build installs its packages there). The graphs are of the
campaign's kind (rank-2 float32 add/subtract/multiply chains with ccompiler regions), built as
the TVM driver builds them without merging (C target, AoT executor, packed API, opt_level 3). The modes alternate
within each round (A B C A B C ...); medians over rounds are printed, per graph and as ratios.
What is timed is TVM's work only: partitioning, relay.build and the Model Library Format export.
"""
import argparse
import inspect
import os
import random
import statistics
import sys
import tempfile
import time


def load_tvm(home):
    sys.path.insert(0, os.path.join(home, "python"))
    os.environ.setdefault("TVM_LIBRARY_PATH", os.path.join(home, "build"))
    import tvm  # noqa: F401

    return tvm


def make_graph(relay, begin, end, rng, tag):
    """An annotated graph: a few inputs, a chain of binary ops, some inside ccompiler regions."""
    shape = (rng.randint(1, 4), rng.randint(1, 4))
    params = [relay.var("x%s_%d" % (tag, i), shape=shape, dtype="float32") for i in range(rng.randint(2, 4))]
    values = list(params)
    ops = [relay.add, relay.subtract, relay.multiply]
    for _ in range(rng.randint(3, 8)):
        a, b = rng.choice(values), rng.choice(values)
        op = rng.choice(ops)
        if rng.random() < 0.5:
            out = end(op(begin(a, "ccompiler"), begin(b, "ccompiler")), "ccompiler")
        else:
            out = op(a, b)
        values.append(out)
    return params, values[-1]


def partition(tvm, relay, params, body, name):
    mod = tvm.IRModule.from_expr(relay.Function(params, body))
    # Without MergeCompilerRegions: these random graphs are not kept merge-safe (aotfuzz's
    # generator knows which of its graphs are; TVM's pass crashes on some that are not).
    mod = relay.transform.InferType()(mod)
    mod = relay.transform.PartitionGraph(name)(mod)
    return relay.transform.InferType()(mod)


def build_and_export(tvm, relay, mod, name):
    from tvm.micro import export_model_library_format

    target = ("c -runtime=c --link-params --executor=aot --workspace-byte-alignment=8 "
              "--interface-api=packed --unpacked-api=0")
    config = {"tir.disable_vectorize": True}
    # As the driver does (tvm/driver.py): Executor objects from v0.9.0, options in the target before.
    if "executor" in inspect.signature(relay.build).parameters:
        from tvm.relay.backend import Executor, Runtime

        executor = Executor("aot", {"interface-api": "packed", "unpacked-api": False,
                                    "link-params": True, "workspace-byte-alignment": 8})
        if "tir.usmp.enable" in tvm.transform.PassContext.list_configs():
            config["tir.usmp.enable"] = False
        with tvm.transform.PassContext(opt_level=3, config=config):
            factory = relay.build(mod, target="c", executor=executor, runtime=Runtime("crt"),
                                  mod_name=name)
    else:
        with tvm.transform.PassContext(opt_level=3, config=config):
            factory = relay.build(mod, target, target_host=target, mod_name=name)
    with tempfile.TemporaryDirectory() as tmp:
        export_model_library_format(factory, os.path.join(tmp, "model.tar"))


def combined(tvm, relay, mods):
    """One module: every external function of `mods`, and a @main returning each one's result."""
    functions, params, bodies = {}, [], []
    for mod in mods:
        for gv, func in mod.functions.items():
            if gv.name_hint == "main":
                params += list(func.params)
                bodies.append(func.body)
            else:
                functions[gv] = func
    out = tvm.IRModule(functions)
    out["main"] = relay.Function(params, relay.Tuple(bodies))
    return relay.transform.InferType()(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tvm_home")
    ap.add_argument("--graphs", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()
    tvm = load_tvm(args.tvm_home)
    from tvm import relay
    from tvm.relay.op.annotation import compiler_begin, compiler_end
    import warnings

    warnings.simplefilter("ignore")
    rng = random.Random(args.seed)
    graphs = [make_graph(relay, compiler_begin, compiler_end, rng, str(i)) for i in range(args.graphs)]

    def one_by_one():
        for i, (p, b) in enumerate(graphs):
            build_and_export(tvm, relay, partition(tvm, relay, p, b, "m%d" % i), "m%d" % i)

    def partitioned_then_one_build():
        mods = [partition(tvm, relay, p, b, "m%d" % i) for i, (p, b) in enumerate(graphs)]
        build_and_export(tvm, relay, combined(tvm, relay, mods), "all")

    def one_module():
        params, bodies = [], []
        for p, b in graphs:
            params += p
            bodies.append(b)
        build_and_export(tvm, relay, partition(tvm, relay, params, relay.Tuple(bodies), "all"), "all")

    modes = [("one by one", one_by_one), ("partitioned apart, one build", partitioned_then_one_build),
             ("one module", one_module)]
    one_by_one()  # TVM's first build in a process pays its lazy set-up
    times = {name: [] for name, _ in modes}
    for _ in range(args.rounds):
        for name, fn in modes:
            t0 = time.perf_counter()
            fn()
            times[name].append(time.perf_counter() - t0)
    print("tvm_build_batching: TVM %s, %d graphs, seed %d, %d rounds, medians"
          % (tvm.__version__, args.graphs, args.seed, args.rounds))
    base = statistics.median(times["one by one"])
    for name, _ in modes:
        m = statistics.median(times[name])
        print("%-30s %7.1f ms per graph  (%.2fx one by one)  rounds: %s"
              % (name, 1000 * m / args.graphs, base / m,
                 " ".join("%.2fs" % t for t in times[name])))


if __name__ == "__main__":
    main()

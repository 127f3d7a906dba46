#!/usr/bin/env python3
"""Time to a TVM bug's first finding: default campaigns on a TVM build, one per seed.

For every seed 1..SEEDS, runs `aotfuzz fuzz --sut tvm --tvm-home DIR --seed S --time T
--no-reduce` (default knobs; FLAGS after `--` are added, e.g. `--single-case` or `--jobs 1`) and
reads from its --stats when SIGNATURE (default `arity:codegen:kernel`, TVM issue #9036 on a build
before its fix) was first found. Prints each seed's time and cases/s, then the median; a seed
that does not find it within the budget counts as the budget.

  bench/tvm_time_to_find.py AOTFUZZ TVM_HOME [--seeds 5] [--time 30] [--signature SIG] [-- FLAGS]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def one_run(args, seed, work):
    findings = os.path.join(work, "findings-%d" % seed)
    stats = findings + ".json"
    cmd = [args.aotfuzz, "fuzz", "--sut", "tvm", "--tvm-home", args.tvm_home, "--seed", str(seed),
           "--time", str(args.time), "--no-reduce", "--findings", findings, "--stats", stats]
    cmd += args.flags
    run = subprocess.run(cmd, capture_output=True, text=True)
    # Exit 1 means findings, which is what is wanted here.
    if run.returncode not in (0, 1):
        sys.exit("tvm_time_to_find: %s exited %d:\n%s" % (" ".join(cmd), run.returncode,
                                                          run.stderr[-2000:]))
    with open(stats) as f:
        data = json.load(f)
    found = [n["found_after_s"] for n in data["findings"]["new"] if n["signature"] == args.signature]
    return (found[0] if found else None), data["cases_per_s"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("aotfuzz")
    p.add_argument("tvm_home")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--time", type=float, default=30)
    p.add_argument("--signature", default="arity:codegen:kernel")
    argv = sys.argv[1:]
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    args = p.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    args.flags = extra
    print("tvm_time_to_find: %s on %s, seeds 1..%d, budget %g s%s"
          % (args.signature, args.tvm_home, args.seeds, args.time,
             (", flags " + " ".join(args.flags)) if args.flags else ""))
    times = []
    with tempfile.TemporaryDirectory(prefix="aotfuzz-tvm-ttf-") as work:
        for seed in range(1, args.seeds + 1):
            t, rate = one_run(args, seed, work)
            times.append(t if t is not None else args.time)
            print("seed %d: %s  (%.1f cases/s)"
                  % (seed, "%.2f s" % t if t is not None else "not found", rate), flush=True)
    print("median %.2f s, worst %.2f s" % (statistics.median(times), max(times)))
    return 0


if __name__ == "__main__":
    sys.exit(main())

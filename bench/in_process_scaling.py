#!/usr/bin/env python3
"""The in-process steps' time per MiB of tensors, which oracle::in_process_budget_for allows
(kMsPerTensorMiB in oracle/in_process_probe.cc).

    bench/in_process_scaling.py AOTFUZZ [--sizes 1000,2000,4000] [--rounds 3]

For each size N, one N x N float32 add in a ccompiler region (N*N*4 bytes in, as many out) is run
with `aotfuzz run --in-process-time 1000` (the budget out of the way) `--no-run` (only the in-process
steps: reference, passes, C code), `rounds` times A B A B across sizes; prints the median seconds
and the milliseconds per MiB of tensors, the figure the budget's share must stay above.
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time


def graph(n):
    return (
        "def @main(%%x: Tensor[(%d, %d), float32]) {\n"
        '  %%0 = annotation.compiler_begin(%%x, compiler="ccompiler");\n'
        "  %%1 = add(%%0, %%0);\n"
        '  annotation.compiler_end(%%1, compiler="ccompiler")\n'
        "}\n" % (n, n)
    )


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("aotfuzz")
    ap.add_argument("--sizes", default="1000,2000,4000")
    ap.add_argument("--rounds", type=int, default=3)
    args = ap.parse_args()
    sizes = [int(s) for s in args.sizes.split(",")]
    times = {n: [] for n in sizes}
    with tempfile.TemporaryDirectory() as tmp:
        files = {}
        for n in sizes:
            files[n] = os.path.join(tmp, "add_%d.relay" % n)
            with open(files[n], "w") as f:
                f.write(graph(n))
        for _ in range(args.rounds):
            for n in sizes:
                t0 = time.monotonic()
                r = subprocess.run([args.aotfuzz, "run", files[n], "--in-process-time", "1000",
                                    "--no-run", "--memory-budget", "4096"],
                                   capture_output=True, text=True, timeout=3600)
                times[n].append(time.monotonic() - t0)
                if r.returncode != 0:
                    sys.exit("aotfuzz run of %dx%d exited %d: %s%s"
                             % (n, n, r.returncode, r.stdout, r.stderr))
    print("%8s %8s %10s %10s" % ("N", "MiB", "median s", "ms/MiB"))
    for n in sizes:
        mib = 2 * n * n * 4 / (1 << 20)
        med = statistics.median(times[n])
        print("%8d %8.1f %10.2f %10.1f" % (n, mib, med, 1000 * med / mib))


if __name__ == "__main__":
    main()

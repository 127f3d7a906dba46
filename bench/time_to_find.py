#!/usr/bin/env python3
"""Time to find each injectable bug: the per-bug table of a default campaign.

For every bug of `aotfuzz bugs` (or the ones named) and every seed 1..SEEDS, runs a default
campaign with that bug injected (no knobs, all cores unless --jobs) that stops at its first
confirmed finding, reduces it, and reads `found_after_s` and the reduced size from --stats.
Prints one row per bug: found in k/SEEDS runs, median and worst seconds to the first finding,
median ops of the reduced graph. A run that finds nothing within --time counts as not found
(its time as the budget).

  bench/time_to_find.py AOTFUZZ [--seeds 5] [--time 60] [--jobs J] [--reduce-time 60] [BUG...]
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile


def bugs_of(aotfuzz):
    out = subprocess.run([aotfuzz, "bugs"], check=True, capture_output=True, text=True).stdout
    return [line.split()[0] for line in out.splitlines() if line.strip()]


def one_run(aotfuzz, bug, seed, args, work):
    findings = os.path.join(work, f"{bug}-{seed}")
    stats = findings + ".json"
    cmd = [aotfuzz, "fuzz", "--inject", bug, "--seed", str(seed), "--time", str(args.time),
           "--stop-after-findings", "1", "--reduce-time", str(args.reduce_time),
           "--findings", findings, "--stats", stats]
    if args.jobs:
        cmd += ["--jobs", str(args.jobs)]
    # Exit 1 means findings, which is what is wanted here.
    run = subprocess.run(cmd, capture_output=True, text=True)
    if run.returncode not in (0, 1):
        sys.exit(f"time_to_find: {' '.join(cmd)} exited {run.returncode}:\n{run.stderr[-2000:]}")
    with open(stats) as f:
        data = json.load(f)
    new = data["findings"]["new"]
    if not new:
        return None
    first = min(new, key=lambda n: n["found_after_s"])
    return first["found_after_s"], first["reduction"]["after"]["ops"], first["signature"]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("aotfuzz")
    p.add_argument("bugs", nargs="*")
    p.add_argument("--seeds", type=int, default=5)
    p.add_argument("--time", type=float, default=60)
    p.add_argument("--jobs", type=int, default=0)
    p.add_argument("--reduce-time", type=float, default=60)
    args = p.parse_intermixed_args()
    bugs = args.bugs or bugs_of(args.aotfuzz)
    print(f"time_to_find: {len(bugs)} bugs, seeds 1..{args.seeds}, budget {args.time:g} s, "
          f"jobs {args.jobs or 'all cores'}")
    print(f"{'bug':28} {'found':>6} {'median s':>9} {'worst s':>8} {'ops':>4}  signature")
    all_found = True
    with tempfile.TemporaryDirectory(prefix="aotfuzz-ttf-") as work:
        for bug in bugs:
            times, ops, sigs, found = [], [], set(), 0
            for seed in range(1, args.seeds + 1):
                r = one_run(args.aotfuzz, bug, seed, args, work)
                if r is None:
                    times.append(args.time)
                    continue
                found += 1
                times.append(r[0])
                ops.append(r[1])
                sigs.add(r[2])
            all_found &= found == args.seeds
            med_ops = f"{statistics.median(ops):g}" if ops else "-"
            print(f"{bug:28} {found:>3}/{args.seeds:<2} {statistics.median(times):9.2f} "
                  f"{max(times):8.2f} {med_ops:>4}  {','.join(sorted(sigs))}", flush=True)
    return 0 if all_found else 1


if __name__ == "__main__":
    sys.exit(main())

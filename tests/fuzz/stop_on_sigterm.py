#!/usr/bin/env python3
"""A campaign sent SIGTERM while its workers are busy (batches compiling and running, reductions
in flight) ends within the bound: its summary printed, its stats written, its usual exit code, nothing
left in its temporary directory. Measured from the signal to the exit of the supervisor, for a
tcc campaign and a gcc one (whose batches take seconds to compile), at several moments.
A campaign that is reducing first finishes the reduction step in flight and the canonicalisation
of the finding's options (at most four runs of the case, so that its bundle does not depend on
when the signal came), hence a bound of its own.
Usage: stop_on_sigterm.py AOTFUZZ WORK_DIR [BOUND_SECONDS] [ROUNDS] [REDUCING_BOUND_SECONDS]
"""
import os
import shutil
import signal
import statistics
import subprocess
import sys
import time

AOTFUZZ, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
BOUND = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
ROUNDS = int(sys.argv[4]) if len(sys.argv) > 4 else 3
REDUCING_BOUND = float(sys.argv[5]) if len(sys.argv) > 5 else BOUND


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def one_stop(name, flags, wait, expected_exits):
    work = os.path.join(WORK, name)
    shutil.rmtree(work, ignore_errors=True)
    tmp = os.path.join(work, "tmp")
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    stats = os.path.join(work, "stats.json")
    cmd = [AOTFUZZ, "fuzz", "--time", "300", "--jobs", "2", "--quiet", "--seed", "7",
           "--findings", os.path.join(work, "findings"), "--stats", stats] + flags
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    time.sleep(wait)
    if proc.poll() is not None:
        fail("%s: the campaign ended before the signal: %s" % (name, proc.stderr.read()))
    sent = time.monotonic()
    proc.send_signal(signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        fail("%s: still running 60 s after SIGTERM" % name)
    took = time.monotonic() - sent
    if proc.returncode not in expected_exits:
        fail("%s: exit %d after SIGTERM, expected %s\nstdout:\n%s\nstderr:\n%s"
             % (name, proc.returncode, expected_exits, out, err))
    if "(interrupted)" not in out:
        fail("%s: no summary saying the campaign was interrupted\nstdout:\n%s" % (name, out))
    if not os.path.exists(stats):
        fail("%s: no stats file after SIGTERM" % name)
    left = os.listdir(tmp)
    if left:
        fail("%s: temporary files left after SIGTERM: %s" % (name, left))
    return took


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    # A stopped campaign exits 1 with findings, else 130: never 0, which a script would take for
    # a budget run to its end with nothing found.
    runs = {"tcc": (["--cc", "tcc"], (130,)), "gcc": (["--cc", "gcc"], (130,)),
            "reducing": (["--cc", "tcc", "--inject", "tuple-arg-first-field", "--inject",
                          "swapped-output-order", "--reduce-time", "60"], (1,))}
    times = {name: [] for name in runs}
    for r in range(ROUNDS):
        for name, (flags, exits) in runs.items():
            times[name].append(one_stop("%s-%d" % (name, r), flags, 2.0 + 1.3 * r, exits))
    late = []
    for name, t in times.items():
        bound = REDUCING_BOUND if name == "reducing" else BOUND
        print("%s: SIGTERM to exit %s s, median %.3f s (bound %.1f s)"
              % (name, " ".join("%.3f" % x for x in t), statistics.median(t), bound))
        if max(t) > bound:
            late.append("%s took %.3f s (bound %.1f s)" % (name, max(t), bound))
    if late:
        fail("campaigns stopped late after SIGTERM: " + "; ".join(late))
    print("PASS: every campaign stopped within its bound")


main()

#!/usr/bin/env python3
"""A campaign killed with SIGKILL at any moment leaves status files a monitor can read: every
file whole (fuzzer_stats with all its keys, plot_data rows of nine fields, campaign records that
parse), updated at least every 10 s while it ran, the rows of earlier campaigns kept, and a
report made from what is left. A write cut short leaves only a hidden temporary file, which
readers skip. Usage: status_files_after_kill9.py AOTFUZZ WORK_DIR
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

AOTFUZZ, WORK = sys.argv[1], sys.argv[2]
KEYS = ["start_time", "last_update", "run_time", "fuzzer_pid", "seed", "jobs", "cases_done",
        "cases_per_sec", "finding_cases", "unique_signatures", "last_new_finding"]


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(findings, killed_after):
    stats = {}
    with open(os.path.join(findings, "fuzzer_stats")) as f:
        for line in f:
            key, sep, value = line.partition(":")
            if not sep:
                fail("fuzzer_stats has a line without a key: %r" % line)
            stats[key.strip()] = value.strip()
    missing = [k for k in KEYS if k not in stats]
    if missing:
        fail("fuzzer_stats lacks %s after a kill at %.1f s" % (missing, killed_after))
    rows = []
    with open(os.path.join(findings, "plot_data")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            fields = [x.strip() for x in line.split(",")]
            if len(fields) != 9 or not line.endswith("\n"):
                fail("plot_data has a torn row: %r" % line)
            rows.append(fields)
    if not rows:
        fail("plot_data has no row after a kill at %.1f s" % killed_after)
    # Rows of one campaign every 5 s (and one at its start): never 10 s apart while it ran.
    times = [float(r[1]) for r in rows if r[0] and int(r[0]) >= int(stats["start_time"])]
    for a, b in zip(times, times[1:]):
        if b < a:
            continue  # the next campaign
        if b - a > 10:
            fail("plot_data rows %.0f s apart" % (b - a))
    if killed_after > 12 and int(stats["last_update"]) - int(stats["start_time"]) < 5:
        fail("fuzzer_stats not updated during %.1f s" % killed_after)
    for name in os.listdir(os.path.join(findings, "campaigns")):
        path = os.path.join(findings, "campaigns", name)
        if name.startswith("."):
            continue  # an interrupted write, never renamed into place
        with open(path) as f:
            record = json.load(f)
        if "verdicts" not in record or "cases" not in record:
            fail("campaign record %s lacks fields" % name)
    return len(rows)


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    findings = os.path.join(WORK, "findings")
    rng = random.Random(7)
    total_rows = 0
    # Four campaigns into one directory, each killed at a different moment; the first after its
    # start has had time to write its first status, which a loaded machine under ASan can delay.
    for run, killed_after in enumerate([rng.uniform(2, 4), rng.uniform(5, 9),
                                        rng.uniform(10, 14), rng.uniform(15, 19)]):
        proc = subprocess.Popen(
            [AOTFUZZ, "fuzz", "--time", "60", "--seed", str(run + 1), "--jobs", "2",
             "--findings", findings, "--quiet"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(killed_after)
        if proc.poll() is not None:
            fail("the campaign ended before the kill (exit %d)" % proc.returncode)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        if not os.path.exists(os.path.join(findings, "fuzzer_stats")):
            fail("no fuzzer_stats after %.1f s" % killed_after)
        rows = check(findings, killed_after)
        if rows <= total_rows:
            fail("plot_data lost the rows of earlier campaigns (%d, had %d)" % (rows, total_rows))
        total_rows = rows
    # A report of what the killed campaigns left.
    r = subprocess.run([AOTFUZZ, "report", findings], capture_output=True, text=True, timeout=120)
    if r.returncode != 0 or "4 campaigns" not in r.stdout:
        fail("aotfuzz report after the kills: exit %d, %s %s" % (r.returncode, r.stdout, r.stderr))
    print("ok: 4 campaigns killed, %d plot_data rows, every file whole" % total_rows)


main()

#!/usr/bin/env python3
"""Ctrl-C (SIGINT) stops `aotfuzz replay`, and `aotfuzz check` in its replay phase, between
replay lines: both exit 130, say how many files were not run, and never say they passed. Before,
replay finished all 58 files and exited 0, and check went on replaying.
Usage: replay_interrupted_test.py AOTFUZZ SOURCE_DIR WORK_DIR
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time

AOTFUZZ, SOURCE, WORK = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
CORPUS = os.path.join(SOURCE, "corpus")
failures = []


def interrupted(name, cmd):
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # One file at a time, the corpus takes tens of seconds: the signal comes in the middle.
    time.sleep(1.5)
    if proc.poll() is not None:
        failures.append("%s ended before the signal (exit %d)" % (name, proc.returncode))
        return
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    if proc.returncode != 130:
        failures.append("%s: exit %d after SIGINT, expected 130\nstdout:\n%s\nstderr:\n%s"
                        % (name, proc.returncode, out, err))
        return
    totals = [l for l in out.splitlines() if l.startswith("replay: ")]
    m = re.search(r", (\d+) not run \(interrupted\)", totals[-1] if totals else "")
    if not m or int(m.group(1)) == 0:
        failures.append("%s: the replay's total does not count files not run:\n%s" % (name, out))
    if "passed" in out.splitlines()[-1] and not out.splitlines()[-1].startswith("replay: "):
        failures.append("%s: the last line says it passed:\n%s" % (name, out))
    if "fuzz shard" in out:
        failures.append("%s: fuzzed after the signal:\n%s" % (name, out))
    print("%s: exit 130, %s" % (name, totals[-1] if totals else "(no total)"))


interrupted("replay", [AOTFUZZ, "replay", CORPUS, "--jobs", "1"])
junit = os.path.join(WORK, "check.xml")
interrupted("check", [AOTFUZZ, "check", "--corpus", CORPUS, "--jobs", "1", "--time", "300",
                      "--findings", os.path.join(WORK, "findings"), "--junit", junit])
# The report says which files were not run, as skipped and not as passed or failed.
if os.path.exists(junit):
    xml = open(junit).read()
    if "<skipped" not in xml or 'failures="0"' not in xml:
        failures.append("check's JUnit report does not mark the files not run as skipped:\n" + xml)
else:
    failures.append("check wrote no JUnit report after SIGINT")
if failures:
    print("FAIL:\n" + "\n".join(failures))
    sys.exit(1)
print("PASS")

#!/usr/bin/env python3
"""`aotfuzz check` stopped by SIGTERM during its fuzz budget exits 130 and does not say it passed:
a gate that was cancelled has not passed, and a script reading the exit code must not take it
for a pass.
Usage: check_interrupted_test.py AOTFUZZ SOURCE_DIR WORK_DIR
"""
import os
import shutil
import signal
import subprocess
import sys
import time

AOTFUZZ, SOURCE, WORK = sys.argv[1], sys.argv[2], os.path.abspath(sys.argv[3])
shutil.rmtree(WORK, ignore_errors=True)
os.makedirs(WORK)
cmd = [AOTFUZZ, "check", "--corpus", os.path.join(SOURCE, "corpus", "seed"), "--time", "300",
       "--jobs", "1", "--findings", os.path.join(WORK, "findings")]
proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
# The replay of the seed corpus takes well under this; the fuzz budget is then running.
time.sleep(4)
if proc.poll() is not None:
    print("FAIL: check ended before the signal (exit %d)\n%s" % (proc.returncode, proc.stdout.read()))
    sys.exit(1)
proc.send_signal(signal.SIGTERM)
out, err = proc.communicate(timeout=120)
if proc.returncode != 130:
    print("FAIL: exit %d after SIGTERM, expected 130\nstdout:\n%s\nstderr:\n%s"
          % (proc.returncode, out, err))
    sys.exit(1)
if "passed" in out.splitlines()[-1]:
    print("FAIL: the last line says it passed:\n" + out)
    sys.exit(1)
print("PASS: exit 130, last line: " + out.splitlines()[-1])

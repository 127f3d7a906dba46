#!/usr/bin/env python3
"""A campaign killed with SIGKILL at 20 random moments (while judging, reducing, writing bundles
or resuming the reductions of an earlier kill) and then run to its end on the same directory
leaves what one uninterrupted run leaves: every finding present once, as the bundle of the same
case, fully reduced and replayable, no half-written bundle, and no temporary directory behind.
Usage: findings_after_kill9.py AOTFUZZ WORK_DIR
"""
import json
import os
import random
import shutil
import signal
import subprocess
import sys
import time

AOTFUZZ, WORK = sys.argv[1], os.path.abspath(sys.argv[2])
# Three bugs with three signatures a few hundred cases find, and reductions worth interrupting.
CAMPAIGN = ["fuzz", "--cases", "300", "--seed", "11", "--jobs", "2", "--reduce-time", "5",
            "--inject", "tuple-arg-first-field", "--inject", "swapped-output-order",
            "--inject", "reuse-live-storage", "--quiet"]
KILLS = 20


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def campaign(findings, env, timeout=600):
    return subprocess.run([AOTFUZZ] + CAMPAIGN + ["--findings", findings], env=env,
                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=timeout)


def descendants(pid):
    """The pids of every process below `pid` now (children first found by their parent's pid)."""
    parent = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % entry) as f:
                stat = f.read()
        except OSError:
            continue
        parent[int(entry)] = int(stat[stat.rfind(")") + 2:].split()[1])
    out, frontier = [], [pid]
    while frontier:
        below = [p for p, pp in parent.items() if pp in frontier]
        out += below
        frontier = below
    return out


def running(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            stat = f.read()
    except OSError:
        return False
    return stat[stat.rfind(")") + 2] != "Z"


def bundles(findings, after_kill=False):
    """{signature: (case, complete)} of the bundles of `findings`; fails on a malformed one, and
    unless `after_kill` on a bundle still being built (a kill leaves it; the next run removes it)."""
    out = {}
    for name in sorted(os.listdir(findings)):
        path = os.path.join(findings, name)
        if name.startswith(".tmp-"):
            if after_kill:
                continue
            fail("a half-written bundle was left: %s" % path)
        if not os.path.isdir(path) or name == "campaigns":
            continue
        try:
            with open(os.path.join(path, "verdict.json")) as f:
                verdict = json.load(f)
        except (OSError, ValueError) as e:
            fail("bundle %s has no readable verdict.json: %s" % (path, e))
        if not os.path.exists(os.path.join(path, "reduced.relay")):
            fail("bundle %s has no reduced.relay" % path)
        sig = verdict["signature"]
        if sig in out:
            fail("signature %s bundled twice" % sig)
        info = verdict["info"]
        out[sig] = (info["case"], info["reduction"]["complete"])
    return out


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    tmp = os.path.join(WORK, "tmp")
    os.makedirs(tmp)
    env = dict(os.environ, TMPDIR=tmp)
    ref = campaign(os.path.join(WORK, "reference"), env)
    if ref.returncode != 1:
        fail("the uninterrupted campaign: exit %d\n%s" % (ref.returncode, ref.stderr))
    expected = bundles(os.path.join(WORK, "reference"))
    if len(expected) < 2:
        fail("the campaign should find at least two signatures, found %s" % expected)

    findings = os.path.join(WORK, "findings")
    rng = random.Random(9)
    for n in range(KILLS):
        killed_after = rng.uniform(0.1, 6.0)
        proc = subprocess.Popen([AOTFUZZ] + CAMPAIGN + ["--findings", findings], env=env,
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(killed_after)
        below = descendants(proc.pid)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        # The supervised campaign's child dies with its parent, and the compilers and programs it
        # started with it; wait until they are gone, as a supervisor restarting the job would.
        deadline = time.monotonic() + 30
        while any(running(p) for p in below):
            if time.monotonic() > deadline:
                fail("kill %d: processes of the killed campaign still run after 30 s: %s"
                     % (n, [p for p in below if running(p)]))
            time.sleep(0.02)
        if os.path.isdir(findings):
            for sig, (case, _) in bundles(findings, after_kill=True).items():
                if sig in expected and expected[sig][0] != case:
                    fail("kill %d: %s bundled from case %d, not %d" % (n, sig, case,
                                                                      expected[sig][0]))
    final = campaign(findings, env)
    if final.returncode != 1:
        fail("the campaign after the kills: exit %d\n%s" % (final.returncode, final.stderr))
    got = bundles(findings)
    if set(got) != set(expected):
        fail("after the kills: %s, uninterrupted: %s" % (sorted(got), sorted(expected)))
    for sig, (case, complete) in got.items():
        if case != expected[sig][0]:
            fail("%s bundled from case %d, not %d" % (sig, case, expected[sig][0]))
        if not complete:
            fail("%s is still marked not fully reduced after a complete campaign" % sig)
    left = sorted(os.listdir(tmp))
    if left:
        fail("temporary directories left behind: %s" % left)
    replay = subprocess.run([AOTFUZZ, "replay", findings], env=env, capture_output=True, text=True,
                            timeout=600)
    if replay.returncode != 0:
        fail("replay of the bundles: exit %d\n%s%s" % (replay.returncode, replay.stdout,
                                                       replay.stderr))
    print("ok: %d kills, then %d signatures bundled once each, complete and replayable"
          % (KILLS, len(got)))


main()

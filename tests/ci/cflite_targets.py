#!/usr/bin/env python3
"""The fuzz targets the ClusterFuzzLite workflows build, against what .clusterfuzzlite/build.sh
installs.

Each google/clusterfuzzlite/actions/build_fuzzers step of .github/workflows/*.yml builds the
targets its environment names in CFL_EXTRA_AOTFUZZ_TARGETS (ClusterFuzzLite hands CFL_EXTRA_*
variables to build.sh), or build.sh's default list, all_targets=(...), when it names none.

usage: cflite_targets.py REPO           one line per build step, tab-separated: FILE:JOB, named
                                        or default, its targets (space-separated)
       cflite_targets.py --check REPO   every named target is one build.sh knows and has
                                        fuzz/targets/<target>.options, and the steps together
                                        build every target (none is built and never fuzzed)
"""
import glob
import os
import re
import sys

import yaml

BUILD_ACTION = "google/clusterfuzzlite/actions/build_fuzzers@"


def build_sh_targets(repo):
    with open(os.path.join(repo, ".clusterfuzzlite", "build.sh")) as f:
        m = re.search(r"^all_targets=\(([^)]*)\)", f.read(), re.M)
    if not m:
        sys.exit("cflite_targets: no all_targets=(...) line in .clusterfuzzlite/build.sh")
    return m.group(1).split()


def build_steps(repo, default):
    """(FILE:JOB, named or default, [targets]) for every ClusterFuzzLite build step."""
    steps = []
    for path in sorted(glob.glob(os.path.join(repo, ".github", "workflows", "*.yml"))):
        with open(path) as f:
            doc = yaml.safe_load(f)
        for job_name, job in (doc.get("jobs") or {}).items():
            for step in job.get("steps") or []:
                if not str(step.get("uses", "")).startswith(BUILD_ACTION):
                    continue
                env = {**(doc.get("env") or {}), **(job.get("env") or {}),
                       **(step.get("env") or {})}
                named = env.get("CFL_EXTRA_AOTFUZZ_TARGETS")
                targets = str(named).split() if named is not None else default
                steps.append((f"{os.path.relpath(path, repo)}:{job_name}",
                              "named" if named is not None else "default", targets))
    return steps


def main():
    check = sys.argv[1] == "--check"
    repo = sys.argv[2] if check else sys.argv[1]
    default = build_sh_targets(repo)
    steps = build_steps(repo, default)
    if not check:
        for where, how, targets in steps:
            print(f"{where}\t{how}\t{' '.join(targets)}")
        return 0
    errors = []
    if not steps:
        errors.append("no workflow has a ClusterFuzzLite build step")
    for where, _, targets in steps:
        if not targets:
            errors.append(f"{where}: CFL_EXTRA_AOTFUZZ_TARGETS names no target")
        for t in targets:
            if t not in default:
                errors.append(f"{where}: '{t}' is not a target build.sh installs ({' '.join(default)})")
    for t in default:
        if not os.path.isfile(os.path.join(repo, "fuzz", "targets", t + ".options")):
            errors.append(f"build.sh installs {t} but fuzz/targets/{t}.options does not exist")
    built = {t for _, _, targets in steps for t in targets}
    for t in default:
        if t not in built:
            errors.append(f"build.sh installs {t} but no workflow builds it, so nothing fuzzes it")
    for where, how, targets in steps:
        print(f"{where} ({how}): {' '.join(targets)}")
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every job of a workflow that builds with ClusterFuzzLite's build_fuzzers action checks the
repository out before it. The action reads .clusterfuzzlite/project.yaml from the workspace to
choose its base image (`base_os_version`); without a checkout it finds none, falls back to its
legacy Ubuntu 20.04 images and the build, which needs Ubuntu 24.04 (project.yaml says why),
fails (google/oss-fuzz PR #14388: base_os_version is read from the workspace; avahi PR #791).

usage: cflite_checkout.py REPO
"""
import glob
import os
import sys

import yaml

BUILD_ACTION = "google/clusterfuzzlite/actions/build_fuzzers@"


def problems(path):
    with open(path) as f:
        doc = yaml.safe_load(f)
    out = []
    for name, job in (doc.get("jobs") or {}).items():
        checked_out = False
        for step in job.get("steps") or []:
            uses = step.get("uses", "")
            if uses.startswith("actions/checkout@"):
                checked_out = True
            elif uses.startswith(BUILD_ACTION) and not checked_out:
                out.append(f"{os.path.basename(path)}: job {name}: build_fuzzers runs before any "
                           "actions/checkout step, so it cannot read .clusterfuzzlite/project.yaml")
    return out


def main():
    repo = sys.argv[1]
    with open(os.path.join(repo, ".clusterfuzzlite", "project.yaml")) as f:
        project = yaml.safe_load(f)
    found = []
    checked = 0
    for path in sorted(glob.glob(os.path.join(repo, ".github", "workflows", "*.yml"))):
        with open(path) as f:
            if BUILD_ACTION not in f.read():
                continue
        checked += 1
        found += problems(path)
    if checked == 0:
        found.append("no workflow uses " + BUILD_ACTION)
    for p in found:
        print("FAIL: " + p)
    if not found:
        print(f"ok: {checked} workflows check out the repository before build_fuzzers "
              f"(project.yaml asks for base_os_version {project.get('base_os_version')})")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())

#!/usr/bin/env python3
"""Every GitHub workflow (.github/workflows/*.yml) and the gate action (action.yml) validates
against GitHub's schemas, as checked by action-validator (npm @action-validator/cli, which
scripts/setup.sh installs under build/npm when npm is there). GitHub only reports a broken
workflow once it is pushed; this reports it before.

usage: validate_workflows.py ACTION_VALIDATOR REPO
"""
import glob
import os
import subprocess
import sys


def main():
    validator, repo = os.path.abspath(sys.argv[1]), sys.argv[2]
    files = sorted(glob.glob(os.path.join(repo, ".github", "workflows", "*.yml")))
    files += [os.path.join(repo, "action.yml")]
    failed = []
    for path in files:
        rel = os.path.relpath(path, repo)
        # From the repository's root, as GitHub reads the files.
        p = subprocess.run([validator, rel], cwd=repo, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=120)
        print(f"{'ok' if p.returncode == 0 else 'FAIL'}: {rel}")
        if p.returncode != 0:
            print(p.stdout)
            failed.append(rel)
    if failed:
        print("invalid: " + ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())

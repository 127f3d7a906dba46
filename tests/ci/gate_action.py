#!/usr/bin/env python3
"""The gate action (action.yml) installs only what the release aotfuzz and `aotfuzz check` need,
passes `extra-args` to check one argument per line without a shell reading them, and puts
check's output and the findings' HTML report in its artifact.

The check step's script is run here as GitHub runs it (bash -e -o pipefail) with a stand-in
aotfuzz that prints its arguments and exits 1.

usage: gate_action.py REPO
"""
import os
import re
import subprocess
import sys
import tempfile

import yaml

# What the gate has no use for: browsers, clang, the test and benchmark libraries, Graphviz.
NOT_FOR_THE_GATE = {"chromium", "clang", "libclang-rt-14-dev", "libgtest-dev",
                    "librapidcheck-dev", "libbenchmark-dev", "graphviz", "python3-pil",
                    "python3-jsonschema"}
# The release build's required finds (CMakeLists.txt, oracle/CMakeLists.txt) and the compilers.
NEEDED = {"cmake", "ninja-build", "g++", "libcli11-dev", "nlohmann-json3-dev", "libspdlog-dev",
          "libboost-dev", "libboost-filesystem-dev", "libdtl-dev", "tcc"}


def shell_array(script, name):
    m = re.search(name + r"=\(([^)]*)\)", script)
    if not m:
        return None
    return set(m.group(1).split())


def main():
    repo = sys.argv[1]
    errors = []
    with open(os.path.join(repo, "action.yml")) as f:
        action = yaml.safe_load(f)
    with open(os.path.join(repo, "scripts", "setup.sh")) as f:
        setup = f.read()
    steps = action["runs"]["steps"]
    runs = [s for s in steps if "run" in s]

    setup_steps = [s for s in runs if "scripts/setup.sh" in s["run"]]
    if not setup_steps or "--gate" not in setup_steps[0]["run"]:
        errors.append("the action does not run scripts/setup.sh with --gate")
    gate = shell_array(setup, "gate_packages")
    if gate is None:
        errors.append("scripts/setup.sh has no gate_packages=(...)")
    else:
        if gate & NOT_FOR_THE_GATE:
            errors.append("the gate installs " + ", ".join(sorted(gate & NOT_FOR_THE_GATE)))
        if NEEDED - gate:
            errors.append("the gate lacks " + ", ".join(sorted(NEEDED - gate)))

    # Inputs reach scripts through the environment only: `${{ inputs.x }}` in a script is text
    # the shell would read.
    for s in runs:
        if "${{" in s["run"]:
            errors.append(f"step {s.get('name')}: an expression inside its script")

    if "extra-args" not in action["inputs"]:
        errors.append("no extra-args input")
    upload = [s for s in steps if s.get("uses", "").startswith("actions/upload-artifact@")]
    paths = upload[0]["with"]["path"] if upload else ""
    for needed in ("${{ inputs.log }}", "${{ inputs.findings }}", "${{ inputs.junit }}"):
        if needed not in paths:
            errors.append(f"the artifact lacks {needed}")
    if not any("aotfuzz\" report" in s["run"] and "report.html" in s["run"] for s in runs):
        errors.append("no step renders the findings' report.html")

    check = [s for s in runs if s.get("id") == "check"]
    if not check:
        errors.append("no step with id check")
    else:
        with tempfile.TemporaryDirectory(prefix="aotfuzz-gate-test-") as tmp:
            cli = os.path.join(tmp, "build", "release", "cli")
            os.makedirs(cli)
            fake = os.path.join(cli, "aotfuzz")
            with open(fake, "w") as f:
                f.write("#!/bin/sh\nfor a in \"$@\"; do printf '[%s]\\n' \"$a\"; done\nexit 1\n")
            os.chmod(fake, 0o755)
            script = os.path.join(tmp, "check.sh")
            with open(script, "w") as f:
                f.write(check[0]["run"])
            marker = os.path.join(tmp, "pwned")
            env = dict(os.environ, GITHUB_ACTION_PATH=tmp,
                       GITHUB_OUTPUT=os.path.join(tmp, "output"))
            for key in check[0]["env"]:
                env[key] = ""
            env.update(IN_SHARDS="2", IN_FINDINGS="f", IN_SARIF="s.sarif", IN_JUNIT="j.xml",
                       IN_LOG=os.path.join(tmp, "check.log"), IN_CASES="5",
                       IN_EXTRA_ARGS="--jobs\n2\n\n$(touch " + marker + ") 'a b'\n")
            p = subprocess.run(["bash", "--noprofile", "--norc", "-eo", "pipefail", script],
                               cwd=tmp, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, timeout=60)
            args = re.findall(r"^\[(.*)\]$", p.stdout, re.M)
            if p.returncode != 0:
                errors.append(f"the check step failed itself (exit {p.returncode}):\n{p.stdout}")
            if os.path.exists(marker):
                errors.append("extra-args was run as shell code")
            if args[-3:] != ["--jobs", "2", "$(touch " + marker + ") 'a b'"]:
                errors.append(f"extra-args did not arrive one argument per line: {args}")
            if "--corpus" in args and args[args.index("--corpus") + 1] != tmp + "/corpus":
                errors.append("an empty corpus input is not the action's own corpus")
            output = os.path.join(tmp, "output")
            if not os.path.exists(output) or "exit-code=1" not in open(output).read():
                errors.append("exit-code is not check's own (1)")
            log = os.path.join(tmp, "check.log")
            if not os.path.exists(log) or "[check]" not in open(log).read():
                errors.append("check's output is not in the log file")
    for e in errors:
        print("FAIL: " + e)
    if not errors:
        print("ok: the gate installs " + str(len(gate)) + " packages; extra-args, the log and "
              "report.html as documented")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

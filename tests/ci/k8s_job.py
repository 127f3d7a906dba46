#!/usr/bin/env python3
"""The Kubernetes Indexed Job (deploy/k8s/tvm-shards.yaml) and its merge step (merge-job.yaml)
run the aotfuzz command lines they mean to. No cluster runs them before a user does, so this runs
each pod's command here, as Kubernetes would start it (its args with $(VAR) expanded from the
pod's environment, JOB_COMPLETION_INDEX included), against a stand-in `aotfuzz` on PATH that
records its arguments, and checks what it was given:

- each shard pod runs `aotfuzz fuzz` with flags `aotfuzz fuzz --help` lists, `--shard I/N` with
  I its index and N the Job's completions, `--sut tvm` with a TVM home of the image, and its own
  findings directory on the shared volume;
- the merge pod runs `aotfuzz merge` on exactly the shards' directories, then triage and report,
  with flags their --help lists.

usage: k8s_job.py AOTFUZZ REPO WORKDIR
"""
import json
import os
import re
import shutil
import stat
import subprocess
import sys

import yaml

FAKE = """#!{python}
import json, os, sys
with open(os.environ["FAKE_AOTFUZZ_LOG"], "a") as f:
    f.write(json.dumps(sys.argv[1:]) + "\\n")
if sys.argv[1:2] == ["merge"] and "--into" in sys.argv:
    os.makedirs(sys.argv[sys.argv.index("--into") + 1], exist_ok=True)
"""

VAR = re.compile(r"\$\(([A-Za-z_][A-Za-z0-9_]*)\)")
HELP = {}
errors = []


def fail(message):
    errors.append(message)
    print("FAIL: " + message)


def help_text(aotfuzz, command):
    if command not in HELP:
        p = subprocess.run([aotfuzz, command, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        HELP[command] = p.stdout if p.returncode == 0 else ""
    return HELP[command]


def check_flags(aotfuzz, argv, where):
    if not argv or argv[0].startswith("-"):
        fail(f"{where}: aotfuzz without a command: {argv}")
        return
    text = help_text(aotfuzz, argv[0])
    if not text:
        fail(f"{where}: aotfuzz has no command '{argv[0]}'")
        return
    for word in argv[1:]:
        if word.startswith("--"):
            flag = word.split("=", 1)[0]
            if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", text):
                fail(f"{where}: '{flag}' is not in `aotfuzz {argv[0]} --help`")


def value(argv, flag):
    return argv[argv.index(flag) + 1] if flag in argv and argv.index(flag) + 1 < len(argv) else None


def expand(words, env, where):
    """Kubernetes' $(VAR) expansion of command and args; a name it does not know stays as is,
    which would reach the program literally."""
    out = []
    for w in words:
        for name in VAR.findall(w):
            if name not in env:
                fail(f"{where}: $({name}) is not in the pod's environment")
        out.append(VAR.sub(lambda m: env.get(m.group(1), m.group(0)), w))
    return out


def run_pod(container, env, repo, workdir, where, path_map=None):
    """Runs a container's command with the fake aotfuzz; returns the aotfuzz argument lists."""
    fake_dir = os.path.join(workdir, "bin")
    os.makedirs(fake_dir, exist_ok=True)
    fake = os.path.join(fake_dir, "aotfuzz")
    with open(fake, "w") as f:
        f.write(FAKE.format(python=sys.executable))
    os.chmod(fake, os.stat(fake).st_mode | stat.S_IXUSR)
    log = os.path.join(workdir, "calls.jsonl")
    if os.path.exists(log):
        os.remove(log)
    for e in container.get("env") or []:
        if "value" in e:
            env[e["name"]] = str(e["value"])
    command = expand(container.get("command") or [], env, where)
    args = expand([str(a) for a in container.get("args") or []], env, where)
    argv = command + args
    for old, new in (path_map or {}).items():
        argv = [a.replace(old, new) for a in argv]
    if not argv:
        fail(f"{where}: no command")
        return []
    # The image's working directory is the repository (deploy/k8s/Dockerfile).
    if argv[0].startswith("scripts/") and not os.path.isfile(os.path.join(repo, argv[0])):
        fail(f"{where}: {argv[0]} is not a script of the repository")
        return []
    run_env = dict(os.environ, PATH=fake_dir + os.pathsep + os.environ.get("PATH", ""),
                   FAKE_AOTFUZZ_LOG=log)
    run_env.pop("AOTFUZZ_TVM_HOME", None)
    run_env.update(env)
    p = subprocess.run(argv, cwd=repo, env=run_env, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=60)
    if p.returncode != 0:
        fail(f"{where}: {' '.join(argv)} exited {p.returncode}:\n{p.stdout}")
    if not os.path.exists(log):
        return []
    with open(log) as f:
        return [json.loads(line) for line in f]


def shared_mounts(pod_spec, container):
    """mountPath -> claim name, for the container's mounts of persistent volume claims."""
    claims = {v["name"]: v["persistentVolumeClaim"]["claimName"]
              for v in pod_spec.get("volumes") or [] if "persistentVolumeClaim" in v}
    return {m["mountPath"]: claims[m["name"]]
            for m in container.get("volumeMounts") or [] if m["name"] in claims}


def main():
    aotfuzz, repo, workdir = (os.path.abspath(a) for a in sys.argv[1:4])
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    k8s = os.path.join(repo, "deploy", "k8s")
    with open(os.path.join(k8s, "tvm-shards.yaml")) as f:
        docs = list(yaml.safe_load_all(f))
    jobs = [d for d in docs if d and d.get("kind") == "Job"]
    if len(jobs) != 1 or jobs[0]["spec"].get("completionMode") != "Indexed":
        fail("tvm-shards.yaml: expected one Job with completionMode Indexed")
        return 1
    job = jobs[0]
    n = int(job["spec"]["completions"])
    pod = job["spec"]["template"]["spec"]
    container = pod["containers"][0]
    mounts = shared_mounts(pod, container)
    if not mounts:
        fail("tvm-shards.yaml: the shards mount no shared volume")
    with open(os.path.join(k8s, "Dockerfile")) as f:
        dockerfile = f.read()

    shard_dirs = []
    for index in sorted({0, n - 1}):
        where = f"tvm-shards.yaml, pod {index}"
        calls = run_pod(container, {"JOB_COMPLETION_INDEX": str(index)}, repo, workdir, where)
        fuzz = [c for c in calls if c[:1] == ["fuzz"]]
        if len(fuzz) != 1:
            fail(f"{where}: expected one `aotfuzz fuzz`, got {calls}")
            continue
        argv = fuzz[0]
        print(f"checked {where}: aotfuzz {' '.join(argv)}")
        check_flags(aotfuzz, argv, where)
        if value(argv, "--shard") != f"{index}/{n}":
            fail(f"{where}: --shard {value(argv, '--shard')}, not {index}/{n} (completions {n})")
        if value(argv, "--sut") != "tvm":
            fail(f"{where}: not --sut tvm")
        home = value(argv, "--tvm-home") or ""
        tag = os.path.basename(home)
        if not home.startswith("/opt/tvm/") or tag not in dockerfile:
            fail(f"{where}: --tvm-home {home} is not a TVM build of the image (Dockerfile)")
        findings = value(argv, "--findings") or ""
        if not any(findings.startswith(m.rstrip("/") + "/") for m in mounts):
            fail(f"{where}: --findings {findings} is not on the shared volume {list(mounts)}")
        shard_dirs.append(findings)
    if len(set(shard_dirs)) != len(shard_dirs):
        fail(f"tvm-shards.yaml: pods share a findings directory: {shard_dirs}")

    # The merge pod: its glob must find every shard's directory, here laid out under a stand-in
    # for the shared volume.
    with open(os.path.join(k8s, "merge-job.yaml")) as f:
        merge_job = next(d for d in yaml.safe_load_all(f) if d and d.get("kind") == "Job")
    merge_pod = merge_job["spec"]["template"]["spec"]
    merge_container = merge_pod["containers"][0]
    merge_mounts = shared_mounts(merge_pod, merge_container)
    if set(merge_mounts.values()) != set(mounts.values()):
        fail(f"merge-job.yaml mounts {merge_mounts}, the shards {mounts}")
    volume = os.path.join(workdir, "volume")
    every_shard = []
    for index in range(n):
        d = expand([v for v in [value(container["args"], "--findings")]], {
            "JOB_COMPLETION_INDEX": str(index)}, "tvm-shards.yaml")[0]
        for m in mounts:
            if d.startswith(m.rstrip("/") + "/"):
                d = os.path.join(volume, d[len(m.rstrip("/")) + 1:])
        os.makedirs(d, exist_ok=True)
        every_shard.append(d)
    path_map = {m: volume for m in merge_mounts}
    calls = run_pod(merge_container, {}, repo, workdir, "merge-job.yaml", path_map)
    for argv in calls:
        print(f"checked merge-job.yaml: aotfuzz {' '.join(argv)}")
        check_flags(aotfuzz, argv, "merge-job.yaml")
    merges = [c for c in calls if c[:1] == ["merge"]]
    if len(merges) != 1:
        fail(f"merge-job.yaml: expected one `aotfuzz merge`, got {calls}")
    else:
        sources = [a for a in merges[0][1:] if not a.startswith("--")]
        sources = [s for s in sources if s != value(merges[0], "--into")
                   and s != value(merges[0], "--sarif")]
        if sorted(sources) != sorted(every_shard):
            fail(f"merge-job.yaml merges {sources}, the shards write {every_shard}")
    if not any(c[:1] == ["report"] for c in calls):
        fail("merge-job.yaml: no report")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

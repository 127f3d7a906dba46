#!/usr/bin/env python3
"""Every `aotfuzz <command> ...` that a GitHub workflow (.github/workflows/*.yml) or the gate
action (action.yml) runs names a command that exists, and every flag it passes appears in that
command's `--help`. GitHub is the first place such a line runs, so a renamed flag would otherwise
break the gate only after merging.

A script of the repository that a run: step starts (a word `scripts/....sh`) is read the same
way, so the steps a workflow keeps in scripts/ (scripts/tvm/shard.sh, ...) are checked too.

A run: script is read as shell: continuation lines are joined, words split as the shell splits
them, and a word "${NAME[@]}" stands for the flags the script puts in the array NAME (NAME=(...)
and NAME+=(...)), which is how the action passes optional flags. The word that runs aotfuzz is
`aotfuzz` or any path ending in /aotfuzz.

usage: workflow_commands.py AOTFUZZ REPO
"""
import glob
import os
import re
import shlex
import subprocess
import sys

import yaml

# Words that end a simple command in a shell line; what follows them is another command.
SEPARATORS = {";", "&", "&&", "|", "||", "(", ")", "|&", ";;"}
ARRAY_ASSIGNMENT = re.compile(r"\b([A-Za-z_][A-Za-z0-9_]*)\+?=\(([^)]*)\)")
ARRAY_EXPANSION = re.compile(r"^\$\{([A-Za-z_][A-Za-z0-9_]*)\[[@*]\]\}$")
# A repository script a step starts.
REPO_SCRIPT = re.compile(r"^(?:\./)?(scripts/[A-Za-z0-9_./-]+\.sh)$")
# Words before `aotfuzz` that look it up rather than run it: `command -v aotfuzz`, `type aotfuzz`.
LOOKUPS = {"-v", "-V", "type", "which", "hash"}


def run_scripts(path):
    """(where, script) for every run: step of a workflow's jobs or of a composite action."""
    with open(path) as f:
        doc = yaml.safe_load(f)
    steps = []
    for job_name, job in (doc.get("jobs") or {}).items():
        for i, step in enumerate(job.get("steps") or []):
            steps.append((f"job {job_name}, step {step.get('name', i + 1)}", step))
    for i, step in enumerate((doc.get("runs") or {}).get("steps") or []):
        steps.append((f"step {step.get('name', i + 1)}", step))
    return [(where, step["run"]) for where, step in steps if "run" in step]


def flag_of(word):
    """The option a word passes, '--time' for '--time' and '--time=60', or None."""
    if word.startswith("--") and len(word) > 2:
        return word.split("=", 1)[0]
    if re.fullmatch(r"-[A-Za-z]", word):
        return word
    return None


def words(text):
    lexer = shlex.shlex(text, posix=True, punctuation_chars=";&|()")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    return list(lexer)


def invocations(script):
    """(command, flags) for every aotfuzz run in a shell script."""
    script = script.replace("\\\n", " ")
    arrays = {}
    for name, body in ARRAY_ASSIGNMENT.findall(script):
        try:
            body_words = words(body)
        except ValueError:
            continue  # `a=("$(cmd "$x")")`: a command's output, no flag of ours
        arrays.setdefault(name, []).extend(f for f in (flag_of(w) for w in body_words) if f)
    found = []
    for line in script.splitlines():
        # Lines that cannot run aotfuzz are not split: a script's other shell need not parse here.
        if "aotfuzz" not in line:
            continue
        tokens = words(line)
        for i, token in enumerate(tokens):
            if token != "aotfuzz" and not token.endswith("/aotfuzz"):
                continue
            if i > 0 and tokens[i - 1] in LOOKUPS:
                continue
            rest = []
            for t in tokens[i + 1:]:
                if t in SEPARATORS:
                    break
                rest.append(t)
            if not rest or rest[0].startswith("-"):
                found.append(("", rest))
                continue
            command, flags = rest[0], []
            for t in rest[1:]:
                m = ARRAY_EXPANSION.match(t)
                if m:
                    flags.extend(arrays.get(m.group(1), []))
                elif flag_of(t):
                    flags.append(flag_of(t))
            found.append((command, flags))
    return found


HELP = {}


def help_text(aotfuzz, command):
    """The --help of a command, or None when aotfuzz does not know the command."""
    if command not in HELP:
        p = subprocess.run([aotfuzz, command, "--help"], stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=60)
        ok = p.returncode == 0 and f"Usage: aotfuzz {command} " in p.stdout
        HELP[command] = p.stdout if ok else None
    return HELP[command]


def repo_scripts(script, repo):
    """(where, text) of each repository script a run: script starts, read as shell too."""
    out = []
    for line in script.replace("\\\n", " ").splitlines():
        try:
            tokens = words(line)
        except ValueError:
            continue
        for token in tokens:
            m = REPO_SCRIPT.match(token)
            if m and os.path.isfile(os.path.join(repo, m.group(1))):
                with open(os.path.join(repo, m.group(1))) as f:
                    out.append((m.group(1), f.read()))
    return out


def main():
    aotfuzz, repo = sys.argv[1:3]
    files = sorted(glob.glob(os.path.join(repo, ".github", "workflows", "*.yml")))
    files += [os.path.join(repo, "action.yml")]
    errors, checked = [], 0
    for path in files:
        rel = os.path.relpath(path, repo)
        scripts = []
        for where, script in run_scripts(path):
            scripts.append((where, script))
            scripts += [(f"{where}, via {name}", text) for name, text in repo_scripts(script, repo)]
        for where, script in scripts:
            try:
                found = invocations(script)
            except ValueError as e:
                errors.append(f"{rel}, {where}: cannot split the script into words: {e}")
                continue
            for command, flags in found:
                checked += 1
                shown = f"{rel}, {where}: aotfuzz {command} {' '.join(flags)}".rstrip()
                if not command:
                    errors.append(f"{shown}: no command after aotfuzz")
                    continue
                text = help_text(aotfuzz, command)
                if text is None:
                    errors.append(f"{shown}: aotfuzz has no command '{command}'")
                    continue
                for flag in flags:
                    if not re.search(r"(?<![\w-])" + re.escape(flag) + r"(?![\w-])", text):
                        errors.append(f"{shown}: '{flag}' is not in `aotfuzz {command} --help`")
                print(f"checked {shown}")
    # The action runs aotfuzz check; finding nothing means this script no longer reads the files.
    if checked == 0:
        errors.append("no aotfuzz invocation found in " + ", ".join(
            os.path.relpath(f, repo) for f in files))
    for e in errors:
        print("FAIL: " + e)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())

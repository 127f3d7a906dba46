#!/usr/bin/env python3
"""Mutation score of the oracle and generator over the pipeline under test (aot/).

Applies single-edit mutants to source files (relational and logical operators, off-by-one,
flipped booleans, dropped statements), rebuilds the CLI incrementally, runs a fixed-budget default
campaign per mutant and prints killed / survived / equivalent / did-not-build per file, with the
diff of every survivor. A mutant is killed when the campaign reports a finding (exit 1).

Equivalent mutants are marked by hand in a reviewed list (--equivalents): per mutant its id
`path:line:column:operator  # why it cannot change behaviour`, then the reviewed line as it is and
as the mutant has it (`  - old`, `  + new`); they are reported apart and left out of the score.
Entries follow their lines when edits move them; an entry whose line was edited is stale and marks
nothing until reviewed again (--check-equivalents lists those; ctest runs it). The source file is
restored after every mutant, also on Ctrl-C.

    bench/mutate.py --build-dir build/release --files aot/fuse_ops.cc --time 60 --max-mutants 100

Not a CI test: at 60 s a mutant, 100 mutants take about two hours on two cores.
"""
import argparse
import json
import os
import random
import re
import subprocess
import sys
import tempfile
import time

# Operators: (name, pattern, replacement). Each match on a line gives one mutant.
OPERATORS = [
    ("lt-to-le", r"(?<=\s)<(?=\s)", "<="),
    ("le-to-lt", r"(?<=\s)<=(?=\s)", "<"),
    ("gt-to-ge", r"(?<=\s)>(?=\s)", ">="),
    ("ge-to-gt", r"(?<=\s)>=(?=\s)", ">"),
    ("eq-to-ne", r"(?<=\s)==(?=\s)", "!="),
    ("ne-to-eq", r"(?<=\s)!=(?=\s)", "=="),
    ("and-to-or", r"(?<=\s)&&(?=\s)", "||"),
    ("or-to-and", r"(?<=\s)\|\|(?=\s)", "&&"),
    ("plus-one-dropped", r"\s\+\s1\b", ""),
    ("minus-one-dropped", r"\s-\s1\b", ""),
    ("true-to-false", r"\btrue\b", "false"),
    ("false-to-true", r"\bfalse\b", "true"),
    ("not-dropped", r"(?<=[(\s])!(?=[a-z_(])", ""),
]
# Statements whose removal is a mutant: calls and assignments, not declarations or control flow.
STATEMENT = re.compile(r"^(\s*)(?!return\b|break\b|continue\b|throw\b|case\b|default\b)"
                       r"[a-z_][\w.\->\[\]:]*(\(.*\)|\s*[-+|&]?=\s.*);\s*$")
DECLARATION = re.compile(r"^\s*(const\s+)?(auto|int|bool|std::|ir::|unsigned|char|double|"
                         r"Group|GraphNode|Edge)\b")


def code_lines(text):
    """Yields (index, line) of lines that are code (not comments, preprocessor or blank)."""
    in_block = False
    for i, line in enumerate(text.split("\n")):
        stripped = line.strip()
        if in_block:
            in_block = "*/" not in stripped
            continue
        if stripped.startswith("/*"):
            in_block = "*/" not in stripped
            continue
        if not stripped or stripped.startswith("//") or stripped.startswith("#"):
            continue
        yield i, line


def bug_code_lines(text):
    """Indices of lines that only run with an injected bug (aot/bugs.def): a line naming a Bug::
    switch, and the block such a line opens. Mutating them cannot change a campaign without
    --inject, so they are left out."""
    out = set()
    depth = None
    for i, line in enumerate(text.split("\n")):
        code = line.split("//", 1)[0]
        if depth is not None:
            out.add(i)
            depth += code.count("{") - code.count("}")
            if depth <= 0:
                depth = None
            continue
        if "Bug::" in code:
            out.add(i)
            opened = code.count("{") - code.count("}")
            if opened > 0:
                depth = opened
    return out


def mutants_of(path, text):
    out = []
    skip = bug_code_lines(text)
    for i, line in code_lines(text):
        if i in skip:
            continue
        code = line.split("//", 1)[0]
        if '"' in code:
            code_part = re.sub(r'"(\\.|[^"\\])*"', lambda m: " " * len(m.group(0)), code)
        else:
            code_part = code
        for name, pattern, repl in OPERATORS:
            for m in re.finditer(pattern, code_part):
                new = line[:m.start()] + repl + line[m.end():]
                out.append({"path": path, "line": i + 1, "operator": name,
                            "column": m.start() + 1, "old": line, "new": new})
        if STATEMENT.match(code) and not DECLARATION.match(code):
            indent = re.match(r"\s*", line).group(0)
            out.append({"path": path, "line": i + 1, "operator": "statement-dropped",
                        "column": len(indent) + 1, "old": line, "new": indent + ";"})
    return out


def mutant_id(m):
    return "%s:%d:%d:%s" % (m["path"], m["line"], m["column"], m["operator"])


def load_equivalents(path):
    """The reviewed list: an entry is `path:line:column:operator  # why`, then the line as it was
    reviewed (`  - old`) and as the mutant has it (`  + new`), as the survivors report prints
    them. Entries are matched by their lines, so they survive edits that only move code."""
    entries = []
    if not path or not os.path.exists(path):
        return entries
    with open(path) as f:
        for n, raw in enumerate(f, 1):
            text = raw.rstrip("\n")
            body = text.strip()
            if body.startswith("- ") or body.startswith("+ ") or body in ("-", "+"):
                if not entries or body[0] in entries[-1]:
                    sys.exit("%s:%d: a '%s' line belongs after an entry, once" % (path, n, body[0]))
                entries[-1][body[0]] = body[2:].strip()
                continue
            key, _, why = text.partition("#")
            key = key.strip()
            if not key:
                continue
            parts = key.split(":")
            if len(parts) != 4 or not parts[1].isdigit() or not parts[2].isdigit():
                sys.exit("%s:%d: an entry is path:line:column:operator  # why" % (path, n))
            if not why.strip():
                sys.exit("%s:%d: an equivalent mutant needs a reason after '#'" % (path, n))
            entries.append({"id": key, "path": parts[0], "line": int(parts[1]),
                            "operator": parts[3], "why": why.strip(), "at": n})
    for e in entries:
        if "-" not in e or "+" not in e:
            sys.exit("%s:%d: the entry needs its '- old' and '+ new' lines" % (path, e["at"]))
    return entries


def resolve_equivalents(entries, mutants):
    """Maps mutant ids to the entries that mark them, each entry to at most one mutant: the one
    with the entry's operator and lines, nearest the entry's line number. Returns the map and the
    stale entries, whose reviewed line is gone (edited: review again)."""
    by_lines = {}
    for m in mutants:
        by_lines.setdefault((m["path"], m["operator"], m["old"].strip(), m["new"].strip()),
                            []).append(m)
    marked, stale = {}, []
    for e in sorted(entries, key=lambda e: e["at"]):
        candidates = [m for m in by_lines.get((e["path"], e["operator"], e["-"], e["+"]), [])
                      if mutant_id(m) not in marked]
        if not candidates:
            stale.append(e)
            continue
        best = min(candidates, key=lambda m: abs(m["line"] - e["line"]))
        marked[mutant_id(best)] = e
    return marked, stale


def print_entry(id_, why, m):
    print("%s  # %s\n  - %s\n  + %s" % (id_, why, m["old"].strip(), m["new"].strip()))


def run(argv, timeout, cwd=None):
    try:
        p = subprocess.run(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           timeout=timeout, text=True)
        return p.returncode, p.stdout
    except subprocess.TimeoutExpired as e:
        return None, (e.stdout or "") if isinstance(e.stdout, str) else ""


# The probe runs the passes of a case that took a campaign down: it must hold the mutant too.
TARGETS = ["cli/aotfuzz", "cli/aotfuzz-probe"]


def check_equivalents(repo, list_path, entries):
    mutants = []
    for path in sorted({e["path"] for e in entries}):
        full = os.path.join(repo, path)
        if os.path.exists(full):
            with open(full) as f:
                mutants += mutants_of(path, f.read())
    marked, stale = resolve_equivalents(entries, mutants)
    for e in stale:
        print("%s:%d: stale: %s no longer has the line it was reviewed on:\n  - %s\n  + %s"
              % (list_path, e["at"], e["id"], e["-"], e["+"]))
    moved = sum(1 for id_, e in marked.items() if id_ != e["id"])
    print("mutate.py: %d equivalents, %d on their reviewed lines (%d of them moved), %d stale"
          % (len(entries), len(marked), moved, len(stale)))
    return 1 if stale else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repo", default=".", help="repository root (default .)")
    ap.add_argument("--build-dir", default="build/release", help="a configured build directory")
    ap.add_argument("--files", nargs="+",
                    default=["aot/merge_compiler_regions.cc", "aot/partition_graph.cc",
                             "aot/fuse_ops.cc"], help="source files to mutate")
    ap.add_argument("--time", type=float, default=60, help="seconds of campaign per mutant")
    ap.add_argument("--seed", type=int, default=1, help="campaign seed")
    ap.add_argument("--jobs", type=int, default=2, help="campaign workers")
    ap.add_argument("--max-mutants", type=int, default=0, help="sample this many (0: all)")
    ap.add_argument("--sample-seed", type=int, default=1, help="seed of the sample")
    ap.add_argument("--equivalents", default="bench/mutation_equivalents.txt",
                    help="reviewed list of equivalent mutants")
    ap.add_argument("--ids", help="run only the mutants whose ids (path:line:column:operator, "
                    "as printed) this file lists, one per line; before sampling")
    ap.add_argument("--list", action="store_true", help="list the mutants and exit")
    ap.add_argument("--check-equivalents", action="store_true",
                    help="check that every reviewed equivalent still points at the line it was "
                    "reviewed on (no build needed); exit 1 naming the stale ones")
    ap.add_argument("--json", help="write the results here")
    a = ap.parse_args()
    if a.time <= 0 or a.jobs < 1 or a.max_mutants < 0:
        ap.error("--time must be > 0, --jobs >= 1, --max-mutants >= 0")
    repo = os.path.abspath(a.repo)
    entries = load_equivalents(os.path.join(repo, a.equivalents))
    if a.check_equivalents:
        return check_equivalents(repo, a.equivalents, entries)
    build = os.path.join(repo, a.build_dir) if not os.path.isabs(a.build_dir) else a.build_dir
    if not os.path.exists(os.path.join(build, "build.ninja")):
        sys.exit("mutate.py: %s is not a configured ninja build directory" % build)
    cli = os.path.join(build, "cli", "aotfuzz")

    all_mutants = []
    for path in a.files:
        with open(os.path.join(repo, path)) as f:
            all_mutants += mutants_of(path, f.read())
    marked, stale = resolve_equivalents([e for e in entries if e["path"] in a.files], all_mutants)
    for e in stale:
        print("mutate.py: %s:%d: stale equivalent %s (its line changed: review it again)"
              % (a.equivalents, e["at"], e["id"]))
    mutants = all_mutants
    if a.ids:
        with open(a.ids) as f:
            wanted = {line.split()[0] for line in f if line.strip()}
        mutants = [m for m in mutants if mutant_id(m) in wanted]
        missing = wanted - {mutant_id(m) for m in mutants}
        if missing:
            sys.exit("mutate.py: no such mutants: " + " ".join(sorted(missing)))
    if a.max_mutants and len(mutants) > a.max_mutants:
        idx = sorted(random.Random(a.sample_seed).sample(range(len(mutants)), a.max_mutants))
        mutants = [mutants[i] for i in idx]
    print("mutate.py: %d mutants of %s (%d in total), sample seed %d, campaign seed %d, %gs each"
          % (len(mutants), " ".join(a.files), len(all_mutants), a.sample_seed, a.seed, a.time))
    if a.list:
        for m in mutants:
            print(mutant_id(m) + ": " + m["new"].strip())
        return 0

    originals = {}
    for path in a.files:
        with open(os.path.join(repo, path)) as f:
            originals[path] = f.read()
    results = []
    try:
        for n, m in enumerate(mutants, 1):
            key = mutant_id(m)
            lines = originals[m["path"]].split("\n")
            lines[m["line"] - 1] = m["new"]
            with open(os.path.join(repo, m["path"]), "w") as f:
                f.write("\n".join(lines))
            t0 = time.time()
            code, out = run(["ninja", "-C", build] + TARGETS, timeout=900)
            if code != 0:
                outcome = "did-not-build"
            else:
                with tempfile.TemporaryDirectory(prefix="aotfuzz-mutant-") as findings:
                    code, out = run([cli, "fuzz", "--time", str(a.time), "--seed", str(a.seed),
                                     "-j", str(a.jobs), "--no-reduce", "--stop-after-findings", "1",
                                     "--findings", findings], timeout=a.time + 120)
                if code == 1:
                    outcome = "killed"
                elif code == 0:
                    outcome = "equivalent" if key in marked else "survived"
                else:
                    outcome = "error"  # a crash of the harness itself, or a hang: look at it
            signature = ""
            for line in out.split("\n"):
                if line.startswith("aotfuzz: new finding "):
                    signature = line.split()[3]
                    break
            results.append(dict(m, id=key, outcome=outcome, signature=signature,
                                seconds=round(time.time() - t0, 1)))
            print("[%d/%d] %-13s %s %s" % (n, len(mutants), outcome, key, signature), flush=True)
            if a.json:  # after every mutant: a run stopped early keeps what it measured
                with open(a.json, "w") as f:
                    json.dump(results, f, indent=1)
            with open(os.path.join(repo, m["path"]), "w") as f:
                f.write(originals[m["path"]])
    finally:
        for path, text in originals.items():
            with open(os.path.join(repo, path), "w") as f:
                f.write(text)
        run(["ninja", "-C", build] + TARGETS, timeout=900)

    print("\n%-34s %7s %7s %8s %10s %13s %6s" % ("file", "mutants", "killed", "survived",
                                                "equivalent", "did-not-build", "score"))
    for path in a.files + ["total"]:
        rs = [r for r in results if path == "total" or r["path"] == path]
        count = {k: sum(1 for r in rs if r["outcome"] == k)
                 for k in ("killed", "survived", "equivalent", "did-not-build", "error")}
        judged = count["killed"] + count["survived"]
        score = "%.0f%%" % (100.0 * count["killed"] / judged) if judged else "-"
        print("%-34s %7d %7d %8d %10d %13d %6s" % (path, len(rs), count["killed"],
                                                   count["survived"], count["equivalent"],
                                                   count["did-not-build"], score))
    survivors = [r for r in results if r["outcome"] in ("survived", "error")]
    if survivors:
        print("\nsurvivors (to mark one equivalent, copy its three lines into %s and say "
              "why after the id's '#'):" % a.equivalents)
        for r in survivors:
            print_entry(r["id"], r["outcome"], r)
    return 0


if __name__ == "__main__":
    sys.exit(main())

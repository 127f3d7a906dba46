#!/usr/bin/env python3
"""The SARIF logs of `aotfuzz replay --sarif` and `aotfuzz check --sarif` validate against the
SARIF 2.1.0 schema, and say
what a code-scanning dashboard needs: one result per unmet expectation, at the corpus file and
the line of its replay line, with the command that replays it.

usage: validate_sarif.py AOTFUZZ SCHEMA SEED_RELAY
"""
import json
import os
import subprocess
import sys
import tempfile

import jsonschema


def main():
    aotfuzz, schema_path, seed = sys.argv[1:4]
    with open(schema_path) as f:
        schema = json.load(f)
    with open(seed) as f:
        graph = f.read()
    with tempfile.TemporaryDirectory(prefix="aotfuzz-sarif-test-") as tmp:
        corpus = os.path.join(tmp, "corpus dir")
        os.makedirs(corpus)
        # One file whose second expectation is wrong (the pipeline passes), one that holds.
        with open(os.path.join(corpus, "wrong.relay"), "w") as f:
            f.write("// replay: --merge --no-run => pass\n"
                    "// replay: --merge --no-run => mismatch:fuse\n" + graph)
        with open(os.path.join(corpus, "right.relay"), "w") as f:
            f.write("// replay: --no-merge --no-run => pass\n" + graph)
        log_path = os.path.join(tmp, "out.sarif")
        p = subprocess.run([aotfuzz, "replay", corpus, "--sarif", log_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
        assert p.returncode == 1, "replay should exit 1 on an unmet expectation:\n" + p.stdout
        with open(log_path) as f:
            log = json.load(f)
        # The gate's log: the same corpus, then a small fixed-seed campaign.
        check_path = os.path.join(tmp, "check.sarif")
        p = subprocess.run([aotfuzz, "check", "--corpus", corpus, "--cases", "30", "-j", "1",
                            "--findings", os.path.join(tmp, "findings"), "--sarif", check_path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                           timeout=600)
        assert p.returncode == 1, "check should exit 1 on an unmet expectation:\n" + p.stdout
        with open(check_path) as f:
            check_log = json.load(f)
    jsonschema.Draft4Validator.check_schema(schema)
    jsonschema.Draft4Validator(schema).validate(log)
    jsonschema.Draft4Validator(schema).validate(check_log)
    check_results = check_log["runs"][0]["results"]
    assert [r["ruleId"] for r in check_results] == [log["runs"][0]["results"][0]["ruleId"]], \
        check_results
    results = log["runs"][0]["results"]
    assert len(results) == 1, results
    r = results[0]
    location = r["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"].endswith("corpus%20dir/wrong.relay"), location
    assert location["region"]["startLine"] == 2, location
    assert "expected mismatch:fuse, got pass" in r["message"]["text"], r
    assert "Replay: aotfuzz run " in r["message"]["text"], r
    rules = [rule["id"] for rule in log["runs"][0]["tool"]["driver"]["rules"]]
    assert r["ruleId"] in rules, (r["ruleId"], rules)
    print("validate_sarif: the replay and check logs validate against the SARIF 2.1.0 schema, "
          "1 result each as expected")
    return 0


if __name__ == "__main__":
    sys.exit(main())

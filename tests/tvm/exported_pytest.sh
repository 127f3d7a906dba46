#!/usr/bin/env bash
# exported_pytest.sh AOTFUZZ TVM_HOME EXPECT(pass|fail) RELAY [FLAGS...]: writes the pytest file
# `aotfuzz show --tvm-pytest` exports for RELAY with FLAGS, runs it with TVM_HOME's Python package
# and AoT test utilities (tests/python/relay/aot), and passes when pytest's outcome is EXPECT.
set -uo pipefail
aotfuzz="$1"; home="$2"; expect="$3"; relay="$4"; shift 4
work="$(mktemp -d "${TMPDIR:-/tmp}/aotfuzz-pytest-XXXXXX")"
trap 'rm -rf "$work"' EXIT
"$aotfuzz" show "$relay" --tvm-pytest "$@" > "$work/test_aotfuzz_repro.py" || exit 1
(cd "$work" && env PYTHONPATH="$home/python:$home/tests/python/relay/aot" \
   TVM_LIBRARY_PATH="$home/build" /usr/bin/python3 -m pytest -q -p no:cacheprovider \
   test_aotfuzz_repro.py) > "$work/pytest.log" 2>&1
rc=$?
tail -25 "$work/pytest.log"
if [ "$expect" = pass ] && [ "$rc" = 0 ]; then exit 0; fi
# pytest exits 1 when a test failed (not 2-5: interrupted, internal error, usage, no tests).
if [ "$expect" = fail ] && [ "$rc" = 1 ]; then exit 0; fi
echo "exported_pytest: pytest exited $rc, expected the test to $expect" >&2
exit 1

#!/usr/bin/env bash
# A finding's printed replay line works when pasted into a shell, once scripts/put-on-path.sh
# (which the README's quick start runs through scripts/setup.sh) has put aotfuzz on PATH.
#   replay_line_as_printed_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1" build="$2"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$src/scripts/put-on-path.sh" "$build" "$tmp/bin"
[ -L "$tmp/bin/aotfuzz" ] || fail "no link $tmp/bin/aotfuzz"
export PATH="$tmp/bin:$PATH"
cd "$src"
set +e
aotfuzz run corpus/regressions/tuple-arg-first-field.relay --inject tuple-arg-first-field > "$tmp/found"
set -e
line="$(sed -n 's/^replay: //p' "$tmp/found")"
[ -n "$line" ] || fail "no replay line in: $(cat "$tmp/found")"
case "$line" in aotfuzz\ run\ *) ;; *) fail "the replay line does not start with 'aotfuzz run': $line" ;; esac
set +e
bash -c "$line" > "$tmp/replayed" 2>&1
rc=$?
set -e
[ "$rc" = 1 ] || fail "the pasted line exited $rc: $(cat "$tmp/replayed")"
grep -q '^signature: arity:codegen:kernel$' "$tmp/replayed" || fail "not the same finding: $(cat "$tmp/replayed")"
echo "ok: $line"

#!/usr/bin/env bash
# expect_exit.sh CODE [REGEX] -- COMMAND...: runs COMMAND; passes when it exits with CODE and (if
# given) its output matches the extended regular expression REGEX. For the ctest tier `tvm`.
set -uo pipefail
want="$1"; shift
regex=""
if [ "$1" != "--" ]; then regex="$1"; shift; fi
[ "$1" = "--" ] || { echo "usage: expect_exit.sh CODE [REGEX] -- COMMAND..." >&2; exit 2; }
shift
output="$("$@" 2>&1)"
got=$?
printf '%s\n' "$output"
if [ "$got" != "$want" ]; then
  echo "expect_exit: exit code $got, expected $want" >&2
  exit 1
fi
if [ -n "$regex" ] && ! printf '%s\n' "$output" | grep -Eq -- "$regex"; then
  echo "expect_exit: no line matches /$regex/" >&2
  exit 1
fi

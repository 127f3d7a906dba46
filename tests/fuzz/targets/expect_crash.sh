#!/bin/sh
# expect_crash.sh SITE COMMAND...: passes when COMMAND fails and its output names SITE (the crash
# site a fuzz target aborted from); prints the output either way.
site=$1
shift
out=$("$@" 2>&1)
status=$?
printf '%s\n' "$out" | tail -n 40
if [ "$status" -eq 0 ]; then
  echo "expect_crash: the command succeeded; expected an abort from $site" >&2
  exit 1
fi
if ! printf '%s\n' "$out" | grep -q "$site"; then
  echo "expect_crash: the command failed ($status) but not from $site" >&2
  exit 1
fi
echo "expect_crash: aborted from $site as expected"

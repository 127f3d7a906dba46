#!/bin/sh
# A stand-in for scripts/tvm/build.sh in the tests of `aotfuzz bisect` (bisect_test.cc):
#   fake_tvm_build.sh SRC [--release-patches] [--patch FILE]... [--jobs N]
# It "builds" a tree of the test's fake TVM history by copying it to a fresh directory under
# $AOTFUZZ_FAKE_BUILD_OUT with an empty build/libtvm.so, and prints that directory last, as the
# real script prints the TVM home. Each call adds one to the number in $AOTFUZZ_FAKE_BUILD_COUNTER
# and one line with its arguments to $AOTFUZZ_FAKE_BUILD_COUNTER.args, so a test can count builds.
# It fails, as a tree that does not compile fails, when the tree has a file BROKEN_BUILD at its
# top or lacks the dlpack submodule's header (the submodule must have been materialised). With
# AOTFUZZ_FAKE_BUILD_KILL_AT=N its N-th call kills aotfuzz (its parent) with SIGKILL.
set -eu
src=$1
counter=$AOTFUZZ_FAKE_BUILD_COUNTER
count=$(( $(cat "$counter" 2>/dev/null || echo 0) + 1 ))
echo "$count" > "$counter"
echo "$*" >> "$counter.args"
if [ "${AOTFUZZ_FAKE_BUILD_KILL_AT:-0}" = "$count" ]; then
  kill -9 "$PPID"
  sleep 2
  exit 1
fi
echo "fake-build: building $src" >&2
if [ ! -f "$src/3rdparty/dlpack/include/dlpack/dlpack.h" ]; then
  echo "fake-build: 3rdparty/dlpack/include/dlpack/dlpack.h: no such file" >&2
  exit 2
fi
if [ -e "$src/BROKEN_BUILD" ]; then
  echo "fake-build: error: this tree does not compile" >&2
  exit 2
fi
out="$AOTFUZZ_FAKE_BUILD_OUT/$count"
mkdir -p "$out"
cp -R "$src/." "$out/"
mkdir -p "$out/build"
: > "$out/build/libtvm.so"
echo "fake-build: done"
echo "$out"

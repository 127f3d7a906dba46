#!/usr/bin/env bash
# The whole test suite: set up, build with AddressSanitizer + UndefinedBehaviorSanitizer, and run
# every ctest tier (unit, property, corpus). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh asan
# The tests that build a tree of their own (the new-pass scaffold) share the compiler cache.
export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --preset asan --output-on-failure -j "$(nproc)"

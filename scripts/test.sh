#!/usr/bin/env bash
# The whole test suite: set up, build with AddressSanitizer + UndefinedBehaviorSanitizer, and run
# every ctest tier (unit, property, corpus). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh asan
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --preset asan --output-on-failure -j "$(nproc)"

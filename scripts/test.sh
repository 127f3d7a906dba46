#!/usr/bin/env bash
# The whole test suite: set up, build with AddressSanitizer + UndefinedBehaviorSanitizer, and run
# every ctest tier (unit, property, corpus). CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."
# The workflows' schema test runs action-validator, which only npm has (tests/ci). It must be
# there before setup.sh configures the build, which registers the test only when it finds it; a
# machine without npm, or without the registry, runs every other test.
validator=@action-validator/cli@0.6.0
if command -v npm > /dev/null && [ ! -x build/npm/node_modules/.bin/action-validator ]; then
  npm install --prefix build/npm --no-audit --no-fund --silent "$validator" \
    || echo "test: npm could not install $validator; the workflows' schema test is left out" >&2
fi
scripts/setup.sh asan
# The tests that build a tree of their own (the new-pass scaffold) share the compiler cache.
export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --preset asan --output-on-failure -j "$(nproc)"

#!/usr/bin/env bash
# A new pass is one row of aot/passes.def plus its file: builds the CLI with the test-only no-op
# pass row (AOTFUZZ_TEST_NOOP_PASS) and checks that, with no other edit, the pass's stage can be
# emitted, is interpreted and counted like every stage, and names verdicts.
# Usage: noop_pass_build_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src="$1"
build="$2"
cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CXX_FLAGS_DEBUG=-O0 \
      -DAOTFUZZ_TESTS=OFF -DAOTFUZZ_BENCH=OFF -DAOTFUZZ_TCMALLOC=OFF -DAOTFUZZ_SANITIZE=OFF \
      -DAOTFUZZ_TEST_NOOP_PASS=ON >/dev/null
cmake --build "$build" --target aotfuzz >/dev/null
aotfuzz="$build/cli/aotfuzz"
seed="$src/corpus/seed/tvm_9036_annotated.relay"
fail() { echo "FAIL: $*" >&2; exit 1; }

# compile --emit offers the new stage, and a no-op's module is the one before it.
"$aotfuzz" compile --help | grep -q "nooped" || fail "--emit does not list nooped"
diff <("$aotfuzz" compile "$seed" --emit nooped) <("$aotfuzz" compile "$seed" --emit fused) \
  || fail "--emit nooped differs from --emit fused"

# Verdict names: a replay line naming the stage parses; the campaign's per-stage counts list it.
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
{ echo "// replay: --merge => pass"; cat "$seed"; } >"$tmp/ok.relay"
"$aotfuzz" replay "$tmp/ok.relay" >/dev/null || fail "replay of the seed failed"
"$aotfuzz" fuzz --cases 20 --jobs 1 --seed 5 --findings "$tmp/f" --stats "$tmp/stats.json" \
  >/dev/null 2>&1 || fail "a clean campaign failed"
grep -q '"noop"' "$tmp/stats.json" || fail "campaign stats have no noop stage"

# Stage localisation: a bug injected before the new pass is still attributed to its own stage.
out="$("$aotfuzz" run "$seed" --inject region-output-off-by-one 2>&1 || true)"
echo "$out" | grep -q "at partition" || fail "region-output-off-by-one not localised to partition: $out"
echo "noop pass: emitted, counted, localised"

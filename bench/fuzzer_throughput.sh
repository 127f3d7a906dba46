#!/usr/bin/env bash
# Executions per second of a libFuzzer build of a decoder target, fuzz_pipeline or
# fuzz_differential (docs/libfuzzer.md), the way the figures there are measured: a fresh corpus
# grown from the repository's seeds for SECONDS on one core (taskset -c 0 when there is taskset;
# fuzz_differential's runner and its children inherit the core), with the flags of the target's
# .options file, as ClusterFuzz runs it. Prints libFuzzer's final line, then what the corpus holds
# (graph sizes) when a corpus_ops binary is given. The environment passes through
# (AOTFUZZ_MEMO=0: fuzz_differential judges every input).
#   bench/fuzzer_throughput.sh FUZZER [SECONDS] [SEED] [CORPUS_OPS]
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 FUZZER [SECONDS] [SEED] [CORPUS_OPS]" >&2
  exit 2
fi
fuzzer="$1"
seconds="${2:-60}"
seed="${3:-1}"
corpus_ops="${4:-}"
repo="$(cd "$(dirname "$0")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
# [libfuzzer] key = value lines of the target's .options, as -key=value.
flags=()
options="$repo/fuzz/targets/$(basename "$fuzzer").options"
if [ -f "$options" ]; then
  while IFS= read -r line; do
    if [[ "$line" =~ ^([a-z_]+)[[:space:]]*=[[:space:]]*([^[:space:]]+)[[:space:]]*$ ]]; then
      flags+=("-${BASH_REMATCH[1]}=${BASH_REMATCH[2]}")
    fi
  done < "$options"
else
  flags+=(-entropic=0)
fi
pin=()
if command -v taskset > /dev/null; then pin=(taskset -c 0); fi
echo "fuzzer_throughput: $fuzzer, ${seconds} s, seed $seed, ${flags[*]}${pin:+, one core}"
"${pin[@]}" "$fuzzer" "${flags[@]}" -max_total_time="$seconds" -seed="$seed" "$work/corpus" \
  "$repo/fuzz/targets/seeds/fuzz_pipeline" >"$work/log" 2>&1 || {
  tail -30 "$work/log" >&2
  exit 1
}
grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log"
if [ -n "$corpus_ops" ]; then "$corpus_ops" "$work/corpus"; fi

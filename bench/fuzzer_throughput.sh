#!/usr/bin/env bash
# Executions per second of a libFuzzer build of fuzz_pipeline (docs/libfuzzer.md), the way the
# figures there are measured: a fresh corpus grown from the repository's seeds for SECONDS on one
# core, -entropic=0 as in fuzz_pipeline.options. Prints libFuzzer's final line, then what the
# corpus holds (graph sizes) when a corpus_ops binary is given.
#   bench/fuzzer_throughput.sh FUZZ_PIPELINE [SECONDS] [SEED] [CORPUS_OPS]
set -euo pipefail
if [ $# -lt 1 ] || [ ! -x "$1" ]; then
  echo "usage: $0 FUZZ_PIPELINE [SECONDS] [SEED] [CORPUS_OPS]" >&2
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
echo "fuzzer_throughput: $fuzzer, ${seconds} s, seed $seed"
"$fuzzer" -entropic=0 -max_total_time="$seconds" -seed="$seed" "$work/corpus" \
  "$repo/fuzz/targets/seeds/fuzz_pipeline" >"$work/log" 2>&1 || {
  tail -30 "$work/log" >&2
  exit 1
}
grep -E '^#[0-9]+[[:space:]]+DONE' "$work/log"
if [ -n "$corpus_ops" ]; then "$corpus_ops" "$work/corpus"; fi

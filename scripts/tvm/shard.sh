#!/usr/bin/env bash
# One shard of a campaign spread over machines, as the scheduled workflow
# (.github/workflows/tvm-campaign.yml) and the Kubernetes Job (deploy/k8s/) run it, and as anyone
# runs it by hand:
#
#   scripts/tvm/shard.sh --shard I/N --time S --seed SEED --findings DIR
#                        [--tvm-home DIR | --sut builtin] [--jobs J] [-- FUZZ_FLAGS...]
#
# Runs `aotfuzz fuzz` (the one on PATH) on shard I of N of the campaign SEED for S seconds, into
# the findings directory DIR, with FUZZ_FLAGS added (`--knob ...`, `--inject ...` for the builtin
# pipeline; every shard of a campaign needs the same); the N shards of one seed run disjoint
# cases, and scripts/tvm/merge-shards.sh brings their directories together. --tvm-home defaults to
# $AOTFUZZ_TVM_HOME. A campaign that found something (aotfuzz's exit 1) is a shard that did its
# work: exit 0. Otherwise aotfuzz's exit code: 2 bad usage, 3 a broken environment (a TVM that
# does not import, no C compiler), 130 stopped by a signal.
set -euo pipefail

usage() { sed -n '6,7p' "$0" | sed 's/^# \{0,1\}/usage: /' >&2; exit 2; }
die() { echo "shard: $*" >&2; exit 2; }

shard="" time="" seed="" findings="" sut=tvm jobs=""
home="${AOTFUZZ_TVM_HOME:-}"
while (($#)); do
  case "$1" in
    --shard|--time|--seed|--findings|--tvm-home|--sut|--jobs) (($# >= 2)) || usage ;;&
    --shard) shard="$2"; shift 2 ;;
    --time) time="$2"; shift 2 ;;
    --seed) seed="$2"; shift 2 ;;
    --findings) findings="$2"; shift 2 ;;
    --tvm-home) home="$2"; shift 2 ;;
    --sut) sut="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    --) shift; break ;;
    *) die "unknown argument '$1'" ;;
  esac
done
[ -n "$shard" ] && [ -n "$time" ] && [ -n "$seed" ] && [ -n "$findings" ] || usage
command -v aotfuzz > /dev/null || die "aotfuzz is not on PATH (scripts/put-on-path.sh BUILD_DIR)"

# aotfuzz checks every value itself (the shard, the budget, the seed, the home).
flags=(--sut "$sut")
if [ "$sut" = tvm ]; then
  [ -n "$home" ] || die "--tvm-home DIR (or AOTFUZZ_TVM_HOME) is needed with --sut tvm"
  flags+=(--tvm-home "$home")
fi
if [ -n "$jobs" ]; then flags+=(--jobs "$jobs"); fi

status=0
aotfuzz fuzz "${flags[@]}" --shard "$shard" --time "$time" --seed "$seed" \
  --findings "$findings" --quiet "$@" || status=$?
case "$status" in
  0|1) echo "shard $shard of seed $seed: done (aotfuzz exit $status); findings in $findings" ;;
  *) exit "$status" ;;
esac

#!/usr/bin/env bash
# The last step of a campaign spread over machines, as the scheduled workflow
# (.github/workflows/tvm-campaign.yml) and the Kubernetes Job (deploy/k8s/) run it, and as anyone
# runs it by hand:
#
#   scripts/tvm/merge-shards.sh --into OUT [--tvm-builds FILE] [--sarif FILE] SHARD_DIR...
#
# Merges the shards' findings directories into OUT (`aotfuzz merge`: a bundle per signature,
# hits summed, each shard's statistics under its name); replays every bundle with this build and,
# with --tvm-builds (one `LABEL DIR` per line, oldest first), on each TVM build, keeping the
# matrix in each bundle's verdict.json and in OUT/triage.txt (`aotfuzz findings --rerun`); renders
# OUT/report.html over the whole, triage included (`aotfuzz report`). --sarif writes a SARIF log
# of the merged bundles for code scanning. Uses the aotfuzz on PATH. Exit 0 when all of it ran,
# whatever was found; otherwise aotfuzz's exit code (2 bad usage, 3 a broken environment).
set -euo pipefail

usage() { sed -n '6p' "$0" | sed 's/^# \{0,1\}/usage: /' >&2; exit 2; }
die() { echo "merge-shards: $*" >&2; exit 2; }

into="" builds="" sarif=""
shards=()
while (($#)); do
  case "$1" in
    --into|--tvm-builds|--sarif) (($# >= 2)) || usage ;;&
    --into) into="$2"; shift 2 ;;
    --tvm-builds) builds="$2"; shift 2 ;;
    --sarif) sarif="$2"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option '$1'" ;;
    *) shards+=("$1"); shift ;;
  esac
done
[ -n "$into" ] && ((${#shards[@]})) || usage
command -v aotfuzz > /dev/null || die "aotfuzz is not on PATH (scripts/put-on-path.sh BUILD_DIR)"

merge_flags=()
if [ -n "$sarif" ]; then merge_flags+=(--sarif "$sarif"); fi
aotfuzz merge --into "$into" "${merge_flags[@]}" "${shards[@]}"

triage=()
if [ -n "$builds" ]; then triage+=(--tvm-builds "$builds"); fi
# Exit 1: some bundle still reproduces with this build, which a campaign's findings do.
status=0
aotfuzz findings "$into" --rerun "${triage[@]}" > "$into/triage.txt" || status=$?
case "$status" in
  0|1) cat "$into/triage.txt" ;;
  *) exit "$status" ;;
esac
aotfuzz report "$into"

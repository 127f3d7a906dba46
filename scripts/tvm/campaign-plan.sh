#!/usr/bin/env bash
# The plan of a sharded TVM campaign (.github/workflows/tvm-campaign.yml): checks the workflow's
# inputs and prints them as `name=value` lines for $GITHUB_OUTPUT.
#
#   scripts/tvm/campaign-plan.sh RELEASES SHARDS MINUTES SEED
#
# RELEASES: TVM release tags, oldest first, separated by blanks or commas (at most 4: the merge
# job restores one TVM build per release). SHARDS: shards per release, releases x shards at most
# 256 (GitHub's limit on a matrix). MINUTES: each shard's fuzzing time, 1 to 300 (a hosted job
# stops at 6 hours; the rest is setup). SEED: the campaign seed, decimal; empty: RUN (the
# workflow passes its run number), so every run fuzzes new cases and says which.
# Prints releases (a JSON list), shards (a JSON list of indices), count, seconds, timeout
# (minutes for a shard's job) and seed. A bad input: one line on stderr and exit 2.
set -euo pipefail
die() { echo "campaign-plan: $*" >&2; exit 2; }
(($# == 4 || $# == 5)) || die "usage: scripts/tvm/campaign-plan.sh RELEASES SHARDS MINUTES SEED [RUN]"
releases_text="$1" shards="$2" minutes="$3" seed="$4" run="${5:-}"

read -r -a releases <<< "${releases_text//,/ }"
((${#releases[@]} >= 1)) || die "no TVM release given"
((${#releases[@]} <= 4)) || die "at most 4 releases, got ${#releases[@]}"
json="["
for r in "${releases[@]}"; do
  [[ "$r" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "'$r' is not a TVM release tag (vX.Y.Z)"
  json+="\"$r\","
done
json="${json%,}]"
[[ "$shards" =~ ^[1-9][0-9]{0,2}$ ]] || die "shards must be a whole number from 1, got '$shards'"
((${#releases[@]} * shards <= 256)) || die "${#releases[@]} releases x $shards shards is more than GitHub's 256 jobs of a matrix"
[[ "$minutes" =~ ^[1-9][0-9]{0,2}$ ]] && ((minutes <= 300)) || die "minutes must be 1 to 300, got '$minutes'"
if [ -z "$seed" ]; then seed="$run"; fi
[[ "$seed" =~ ^[0-9]{1,19}$ ]] || die "the seed must be a decimal number, got '$seed'"

indices="["
for ((i = 0; i < shards; i++)); do indices+="$i,"; done
indices="${indices%,}]"
echo "releases=$json"
echo "shards=$indices"
echo "count=$shards"
echo "seconds=$((minutes * 60))"
# Setting up (packages, aotfuzz's build, the TVM build's restore) and the upload take minutes.
echo "timeout=$((minutes + 45))"
echo "seed=$seed"

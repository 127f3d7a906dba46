#!/usr/bin/env bash
# The main job: set up, build, and run the default fuzz campaign (about a minute on all cores;
# findings are reduced into bundles under ./findings, each printed with its replay command), then
# write findings/report.html, a page of every campaign that wrote into the findings directory.
# Extra arguments go to `aotfuzz fuzz`, e.g. scripts/main-job.sh --time 600 --seed 7
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release
findings=findings
args=("$@")
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    --findings) findings="${args[i + 1]:-findings}" ;;
    --findings=*) findings="${args[i]#--findings=}" ;;
  esac
done
rc=0
build/release/cli/aotfuzz fuzz --time 60 "$@" || rc=$?
# The campaign's exit code stands (1: findings); the page is made whenever the directory exists.
if [ -d "$findings" ]; then
  build/release/cli/aotfuzz report "$findings" || true
fi
exit "$rc"

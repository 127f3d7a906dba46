#!/usr/bin/env bash
# The main job: set up, build, and run the default fuzz campaign (about a minute on all cores;
# findings are reduced into bundles under ./findings, each printed with its replay command).
# Extra arguments go to `aotfuzz fuzz`, e.g. scripts/main-job.sh --time 600 --seed 7
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh release
exec build/release/cli/aotfuzz fuzz --time 60 "$@"

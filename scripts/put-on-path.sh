#!/usr/bin/env bash
# Puts the built `aotfuzz` on PATH, so that the replay lines it prints (`aotfuzz run ...`) work
# when pasted: a symbolic link BIN_DIR/aotfuzz to BUILD_DIR/cli/aotfuzz. aotfuzz finds the
# programs it starts (aotfuzz-runner, aotfuzz-probe) next to its real path, so the link is enough.
#   scripts/put-on-path.sh BUILD_DIR [BIN_DIR]   (default BIN_DIR: /usr/local/bin)
set -euo pipefail
build="${1:?usage: scripts/put-on-path.sh BUILD_DIR [BIN_DIR]}"
bin="${2:-/usr/local/bin}"
target="$(realpath -e -- "$build/cli/aotfuzz")"
if ! mkdir -p -- "$bin" 2>/dev/null || [ ! -w "$bin" ]; then
  echo "put-on-path: cannot write $bin; run $target by its path, or add $(dirname "$target") to PATH" >&2
  exit 0
fi
ln -sfn -- "$target" "$bin/aotfuzz"
case ":$PATH:" in
  *":$bin:"*) echo "put-on-path: aotfuzz is $bin/aotfuzz -> $target" >&2 ;;
  *) echo "put-on-path: linked $bin/aotfuzz -> $target; $bin is not on PATH" >&2 ;;
esac

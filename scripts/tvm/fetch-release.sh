#!/usr/bin/env bash
# A TVM release's source with the submodules a CPU build needs (dmlc-core, dlpack, rang), from
# apache/tvm on GitHub, for scripts/tvm/build.sh:
#
#   scripts/tvm/fetch-release.sh TAG DIR
#
# A shallow clone of one tag: the same tag gives the same files, so build.sh's cache key (the
# files' content) is the same on every run, and a build cached once serves every later run.
set -euo pipefail
die() { echo "fetch-release: $*" >&2; exit 2; }
(($# == 2)) || die "usage: scripts/tvm/fetch-release.sh TAG DIR"
tag="$1" dir="$2"
[[ "$tag" =~ ^v[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "'$tag' is not a TVM release tag (vX.Y.Z)"
command -v git > /dev/null || { echo "fetch-release: git is not installed" >&2; exit 3; }
[ ! -e "$dir" ] || die "$dir exists already"
git clone --quiet --depth 1 --branch "$tag" https://github.com/apache/tvm "$dir" || exit 3
git -C "$dir" submodule update --quiet --init --depth 1 \
  3rdparty/dmlc-core 3rdparty/dlpack 3rdparty/rang || exit 3
echo "$dir"

#!/usr/bin/env bash
# Builds Apache TVM (CPU only, USE_MICRO ON, no LLVM) for `aotfuzz --sut tvm`.
#
#   scripts/tvm/build.sh SRC [--patch FILE]... [--release-patches] [--release] [--cache DIR]
#                        [--jobs N] [--print-key]
#   scripts/tvm/build.sh --deps-only
#
# --release builds TVM optimised (-O2, no debug information; a cache key of its own) instead of
# the default -O0, which builds several times faster and runs slower.
# A release that has UMA (v0.10.0 on: `USE_UMA` in its cmake/config.cmake) builds with USE_UMA ON,
# under a cache key of its own, so the lane can offload regions to the project's UMA backend.
# --print-key prints the build's cache key and builds nothing (CI caches the build under it);
# --deps-only installs the Debian packages TVM's Python needs, for a build restored from a cache.
# --release-patches applies each patch of scripts/tvm/patches/ that applies to SRC (each says
# why a release needs it to build or run here without LLVM), before the --patch files.
# SRC is a TVM source tree or a tarball of one. The build lands in a cache directory outside the
# repository (default ~/.cache/aotfuzz/tvm, or $AOTFUZZ_TVM_CACHE), keyed by the source's content
# and the patches' content, so a second call with the same inputs does nothing. The source is
# copied before patching: the user's tree is never modified. Compiles go through ccache with the
# cache root as base directory, so a build that differs from an earlier one by a patch recompiles
# only the files the patch touches.
#
# The last line printed is the TVM home to pass as `--tvm-home` (or export as AOTFUZZ_TVM_HOME);
# `$home/env.sh` sets PYTHONPATH and TVM_LIBRARY_PATH for running TVM's Python by hand.
set -euo pipefail

usage() { echo "usage: scripts/tvm/build.sh SRC [--patch FILE]... [--release-patches] [--release] [--cache DIR] [--jobs N] [--print-key] | --deps-only" >&2; exit 2; }
die() { echo "tvm-build: $*" >&2; exit 2; }

src=""
patches=()
release_patches=0
optimise=0
cache="${AOTFUZZ_TVM_CACHE:-$HOME/.cache/aotfuzz/tvm}"
jobs="$(nproc)"
print_key=0
deps_only=0
while (($#)); do
  case "$1" in
    --patch) (($# >= 2)) || usage; patches+=("$(realpath -e -- "$2")") || die "no such patch: $2"; shift 2 ;;
    --release-patches) release_patches=1; shift ;;
    --release) optimise=1; shift ;;
    --cache) (($# >= 2)) || usage; cache="$2"; shift 2 ;;
    --jobs) (($# >= 2)) || usage; [[ "$2" =~ ^[1-9][0-9]*$ ]] || die "--jobs wants a positive integer, got '$2'"; jobs="$2"; shift 2 ;;
    --print-key) print_key=1; shift ;;
    --deps-only) deps_only=1; shift ;;
    -h|--help) sed -n '2,21p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    -*) die "unknown option $1" ;;
    *) [ -z "$src" ] || usage; src="$1"; shift ;;
  esac
done
if ((deps_only)); then [ -z "$src" ] || usage; else [ -n "$src" ] || usage; fi
if ((!deps_only)); then
  [ -e "$src" ] || die "no such source: $src"
  src="$(realpath -e -- "$src")"
fi

# Debian packages: the build, TVM's Python, pytest for exported repros, ccache for rebuilds.
packages=(cmake ninja-build g++ ccache python3 python3-numpy python3-scipy python3-decorator
          python3-attr python3-psutil python3-cloudpickle python3-tornado python3-pytest
          python3-typing-extensions xz-utils patch cython3 python3-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "tvm-build: installing ${missing[*]}" >&2
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
if ((deps_only)); then exit 0; fi

# The repository's release patches that apply to this source: dry-run on the files each touches.
if ((release_patches)); then
  here="$(cd "$(dirname "$0")" && pwd)"
  probe="$(mktemp -d)"
  chosen=()
  for p in "$here"/patches/*.diff; do
    [ -e "$p" ] || continue
    mapfile -t touched < <(sed -n 's|^+++ b/||p' "$p" | cut -f1)
    rm -rf "${probe:?}"/*
    mkdir -p "$probe/t"
    for f in "${touched[@]}"; do
      if [ -f "$src" ]; then
        tar -xf "$src" -C "$probe" --wildcards "*/$f" "$f" 2>/dev/null || true
      elif [ -f "$src/$f" ]; then
        mkdir -p "$probe/t/$(dirname "$f")" && cp "$src/$f" "$probe/t/$f"
      fi
    done
    # The tree's root: where the first touched file sits, less its path in the patch.
    dir="$(find "$probe" -path "*/${touched[0]}" | head -1)"
    [ -n "$dir" ] || continue
    base="${dir%/${touched[0]}}"
    if patch -d "$base" -p1 --dry-run --quiet < "$p" >/dev/null 2>&1; then
      chosen+=("$p")
      echo "tvm-build: release patch applies: $(basename "$p")" >&2
    fi
  done
  rm -rf "$probe"
  patches=("${chosen[@]}" "${patches[@]}")
fi

# The key: content of the source (tarball bytes, or every file of the tree in path order) and of
# each patch in order. Build artefacts inside a source tree are not part of its identity.
if [ -f "$src" ]; then
  src_hash="$(sha256sum < "$src" | cut -c1-64)"
else
  src_hash="$(cd "$src" && find . \( -name build -o -name .git -o -name __pycache__ \) -prune -o -type f -print0 \
              | LC_ALL=C sort -z | xargs -0 sha256sum | sha256sum | cut -c1-64)"
fi
# UMA (v0.10.0 on) is switched on where the source's config knows it.
if [ -f "$src" ]; then
  config_text="$(tar -xOf "$src" --wildcards '*cmake/config.cmake' 2>/dev/null || true)"
else
  config_text="$(cat "$src/cmake/config.cmake" 2>/dev/null || true)"
fi
uma=0
if grep -q '^set(USE_UMA' <<< "$config_text"; then uma=1; fi
key_input="src $src_hash"
for p in "${patches[@]}"; do key_input+=$'\n'"patch $(sha256sum < "$p" | cut -c1-64)"; done
if ((optimise)); then key_input+=$'\n'"optimised -O2"; fi
if ((uma)); then key_input+=$'\n'"uma on"; fi
key="$(printf '%s' "$key_input" | sha256sum | cut -c1-16)"
if ((print_key)); then echo "$key"; exit 0; fi
root="$cache/$key"
home="$root/tvm"
mkdir -p "$cache"

if [ -f "$root/done" ]; then
  echo "tvm-build: cached build $key" >&2
else
  exec 9>"$root.lock"
  flock 9
  if [ ! -f "$root/done" ]; then
    rm -rf "$root"
    mkdir -p "$home"
    echo "tvm-build: key $key: unpacking $src" >&2
    if [ -f "$src" ]; then
      tar -xf "$src" -C "$home"
      # A tarball usually holds one top-level folder.
      if [ "$(find "$home" -mindepth 1 -maxdepth 1 | wc -l)" = 1 ] && [ -d "$(find "$home" -mindepth 1 -maxdepth 1)" ]; then
        inner="$(find "$home" -mindepth 1 -maxdepth 1)"
        mv "$inner" "$root/tvm.tmp" && rmdir "$home" && mv "$root/tvm.tmp" "$home"
      fi
    else
      # Everything but build trees and git metadata, as the key counts it.
      tar -C "$src" --exclude=build --exclude=.git -cf - . | tar -C "$home" -xf -
    fi
    [ -f "$home/CMakeLists.txt" ] && [ -d "$home/python/tvm" ] || die "$src does not look like a TVM source tree"
    for p in "${patches[@]}"; do
      echo "tvm-build: applying $p" >&2
      patch -d "$home" -p1 --forward --quiet < "$p" || die "patch does not apply: $p"
    done
    mkdir -p "$home/build"
    cp "$home/cmake/config.cmake" "$home/build/config.cmake"
    {
      echo 'set(USE_MICRO ON)'
      echo 'set(USE_LIBBACKTRACE OFF)'
      echo 'set(USE_LLVM OFF)'
      if ((uma)); then echo 'set(USE_UMA ON)'; fi
    } >> "$home/build/config.cmake"
    export CCACHE_DIR="${CCACHE_DIR:-$cache/ccache}" CCACHE_BASEDIR="$cache" CCACHE_NOHASHDIR=1
    export CCACHE_MAXSIZE="${CCACHE_MAXSIZE:-5G}"
    # -O0: the build is several times faster than at -O1 and TVM runs fast enough at -O0 for
    # graphs of a few adds. No -g0: TVM's CMakeLists takes any "-g" in the flags for a debug build
    # and then adds -ffile-prefix-map with this tree's absolute path, which defeats ccache across
    # cache keys.
    echo "tvm-build: configuring (log: $root/build.log)" >&2
    opt_flags="-O0"
    if ((optimise)); then opt_flags="-O2"; fi
    (cd "$home/build" && cmake .. -G Ninja -DCMAKE_BUILD_TYPE= -DCMAKE_CXX_FLAGS="$opt_flags" \
        -DCMAKE_C_FLAGS="$opt_flags" -DCMAKE_CXX_COMPILER_LAUNCHER=ccache \
        -DCMAKE_C_COMPILER_LAUNCHER=ccache) > "$root/build.log" 2>&1 \
      || { tail -20 "$root/build.log" >&2; die "cmake failed (log: $root/build.log)"; }
    echo "tvm-build: building with $jobs jobs (about 40 minutes on 2 cores the first time)" >&2
    (cd "$home/build" && ninja -j "$jobs") >> "$root/build.log" 2>&1 \
      || { tail -30 "$root/build.log" >&2; die "build failed (log: $root/build.log)"; }
    {
      echo "source: $src"
      for p in "${patches[@]}"; do echo "patch: $p"; done
    } > "$root/inputs"
    touch "$root/done"
  fi
fi

# TVM's Python made ready to start fast, once per build: its Cython FFI (its `make cython3`; TVM's
# pip packages ship it), without which TVM falls back to ctypes, whose Python per FFI crossing is
# about 14% of TVM's work per graph on a Release build (the same C++ functions run either
# way; a source whose extension does not build runs on ctypes), and its modules' bytecode, which
# aotfuzz's TVM drivers do not write (PYTHONDONTWRITEBYTECODE) and would otherwise compile at
# every start.
if [ ! -f "$root/python-ready" ]; then
  exec 9>"$root.lock"
  flock 9
  if [ ! -f "$root/python-ready" ]; then
    echo "tvm-build: building TVM's Cython FFI and bytecode" >&2
    (cd "$home/python" && /usr/bin/python3 setup.py build_ext --inplace) >> "$root/build.log" 2>&1 \
      || echo "tvm-build: TVM's Cython FFI did not build (log: $root/build.log); TVM runs on ctypes" >&2
    /usr/bin/python3 -m compileall -q -j 0 "$home/python/tvm" >> "$root/build.log" 2>&1 \
      || echo "tvm-build: some of TVM's modules did not compile to bytecode (log: $root/build.log)" >&2
    touch "$root/python-ready"
  fi
  exec 9>&-
fi

cat > "$home/env.sh" <<ENV
export AOTFUZZ_TVM_HOME='$home'
export PYTHONPATH='$home/python'
export TVM_LIBRARY_PATH='$home/build'
ENV
/usr/bin/python3 - "$home" <<'PY' >&2 || die "the build at $home does not import: see above"
import os, sys
home = sys.argv[1]
os.environ["TVM_LIBRARY_PATH"] = os.path.join(home, "build")
sys.path.insert(0, os.path.join(home, "python"))
import tvm
print("tvm-build: tvm", tvm.__version__, "imports from", home)
PY
echo "$home"

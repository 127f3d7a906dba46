#!/usr/bin/env bash
# Installs what a fresh Debian 12 machine lacks (as root, via apt-get), then configures and builds
# one CMake preset. Usage: scripts/setup.sh [preset] [--gate]   (default: release)
# --gate installs only what the release aotfuzz needs to build and `aotfuzz check` to run (the
# gate action, action.yml), not the tests', benchmarks' and tools' packages.
set -euo pipefail
cd "$(dirname "$0")/.."
gate=false
args=()
for arg in "$@"; do
  case "$arg" in
    --gate) gate=true ;;
    *) args+=("$arg") ;;
  esac
done
preset="${args[0]:-release}"

# The release build's libraries (CMakeLists.txt, oracle/), its compilers, and the C compilers
# check runs cases with (tcc, libtcc for batches in memory, gcc).
gate_packages=(cmake ninja-build ccache g++ tcc libtcc-dev libboost-dev libboost-filesystem-dev
               libcli11-dev nlohmann-json3-dev libspdlog-dev libgoogle-perftools-dev libdtl-dev)
# The tests, benchmarks, clang builds, bundle pictures and the report's browser test.
dev_packages=(clang libclang-rt-14-dev graphviz python3 libgtest-dev librapidcheck-dev
              libbenchmark-dev python3-jsonschema chromium python3-pil python3-yaml)
packages=("${gate_packages[@]}")
if [ "$gate" = false ]; then packages+=("${dev_packages[@]}"); fi
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo=""
  if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# A clone in another directory still hits the compiler cache: paths are taken relative to the
# clone, and the directory of a debug build is left out of the hash.
export CCACHE_BASEDIR="$(pwd)" CCACHE_NOHASHDIR=1
cmake --preset "$preset" >/dev/null
cmake --build --preset "$preset" -j "$(nproc)"
# The main job's replay lines say `aotfuzz run ...`: make that command exist.
if [ "$preset" = release ]; then scripts/put-on-path.sh build/release; fi

#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script of aotfuzz (docs/libfuzzer.md). Uses what the builder
# sets: $CC $CXX $CFLAGS $CXXFLAGS (instrumentation and sanitizers), $LIB_FUZZING_ENGINE, $SRC,
# $WORK, $OUT. Writes to $OUT every target with <target>_seed_corpus.zip, <target>.dict and
# <target>.options; at run time the targets need nothing but $OUT and /tmp.
#
# fuzz_differential is not built: it compiles C in memory with libtcc, but that C includes glibc
# headers (signal.h, sys/mman.h, ...) and libtcc needs its include/ and libtcc1.a at run time,
# none of which ClusterFuzz's runners have (run it on your own machines, docs/libfuzzer.md).

src="${AOTFUZZ_SRC:-$SRC/aotfuzz}"
build="$WORK/aotfuzz-build"
targets="fuzz_parser fuzz_pipeline fuzz_pipeline_text"

# The compiled apt library the configuration finds (Boost.Filesystem) is built against libstdc++, so
# the targets are too (OSS-Fuzz's CXXFLAGS ask for libc++; MemorySanitizer is not supported).
CXXFLAGS="${CXXFLAGS//-stdlib=libc++/}"
export CXXFLAGS

generator="Unix Makefiles"
if command -v ninja > /dev/null; then generator=Ninja; fi

# CMAKE_BUILD_TYPE=None: the optimisation level is the builder's ($CFLAGS), not -O3.
cmake -S "$src" -B "$build" -G "$generator" \
  -DCMAKE_BUILD_TYPE=None \
  -DCMAKE_C_COMPILER="$CC" -DCMAKE_CXX_COMPILER="$CXX" \
  -DAOTFUZZ_TESTS=OFF -DAOTFUZZ_BENCH=OFF -DAOTFUZZ_TCMALLOC=OFF \
  -DAOTFUZZ_LIB_FUZZING_ENGINE="$LIB_FUZZING_ENGINE" \
  -DBoost_USE_STATIC_LIBS=ON
# shellcheck disable=SC2086
cmake --build "$build" --target $targets -j"$(nproc)"

for t in $targets; do
  cp "$build/fuzz/targets/$t" "$OUT/"
  cp "$src/fuzz/targets/$t.options" "$OUT/"
done
cp "$src/fuzz/targets/relay.dict" "$OUT/fuzz_parser.dict"
cp "$src/fuzz/targets/relay.dict" "$OUT/fuzz_pipeline_text.dict"

# Seed corpora: every .relay graph of corpus/ for the text targets, the byte seeds for the
# decoder target. zip -j stores bare names; ClusterFuzz unpacks them into the target's corpus.
zip_seeds() {  # zip_seeds ARCHIVE FILE...
  rm -f "$1"
  if command -v zip > /dev/null; then
    zip -q -j "$@"
  else
    python3 -m zipfile -c "$@"
  fi
}
mapfile -t relay < <(find "$src/corpus" -name '*.relay' -type f | sort)
zip_seeds "$OUT/fuzz_parser_seed_corpus.zip" "${relay[@]}"
zip_seeds "$OUT/fuzz_pipeline_text_seed_corpus.zip" "${relay[@]}"
mapfile -t bytes < <(find "$src/fuzz/targets/seeds/fuzz_pipeline" -type f | sort)
zip_seeds "$OUT/fuzz_pipeline_seed_corpus.zip" "${bytes[@]}"

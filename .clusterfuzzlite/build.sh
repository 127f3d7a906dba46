#!/bin/bash -eu
# ClusterFuzzLite / OSS-Fuzz build script of aotfuzz (docs/libfuzzer.md). Uses what the builder
# sets: $CC $CXX $CFLAGS $CXXFLAGS (instrumentation and sanitizers), $LIB_FUZZING_ENGINE, $SRC,
# $WORK, $OUT. Writes to $OUT every target with <target>_seed_corpus.zip, <target>.options and
# (the text targets) <target>.dict; at run time the targets need nothing but $OUT and /tmp.
#
# AOTFUZZ_TARGETS (space-separated names) builds and installs only those targets; the default is
# all four. ClusterFuzzLite's run_fuzzers runs whatever is in $OUT and has no parameter to choose,
# so this is how pull-request fuzzing leaves out the slow fuzz_differential. ClusterFuzzLite passes
# a workflow step's environment into this build only for names starting with CFL_EXTRA_, so the
# workflows set CFL_EXTRA_AOTFUZZ_TARGETS, read here when AOTFUZZ_TARGETS is not set
# (docs/fuzzing.md, "Run it continuously").
#
# fuzz_differential compiles the generated C in memory with libtcc (linked statically). At run
# time libtcc reads its include/ and libtcc1.a, and the C includes system headers: ClusterFuzz's
# runners have none of them, so they are shipped beside the target in $OUT/aotfuzz-tcc, where
# the target looks first (oracle/runner/runner.cc).

src="${AOTFUZZ_SRC:-$SRC/aotfuzz}"
build="$WORK/aotfuzz-build"
all_targets=(fuzz_parser fuzz_pipeline fuzz_pipeline_text fuzz_differential)
read -r -a targets <<< "${AOTFUZZ_TARGETS:-${CFL_EXTRA_AOTFUZZ_TARGETS:-${all_targets[*]}}}"
# A misspelt name stops the build here, with the names it takes, not deep in CMake's output.
if [ "${#targets[@]}" -eq 0 ]; then
  echo "build.sh: AOTFUZZ_TARGETS names no target; known: ${all_targets[*]}" >&2
  exit 1
fi
for t in "${targets[@]}"; do
  case " ${all_targets[*]} " in
    *" $t "*) ;;
    *) echo "build.sh: unknown target '$t' in AOTFUZZ_TARGETS; known: ${all_targets[*]}" >&2
       exit 1 ;;
  esac
done
selected() { case " ${targets[*]} " in *" $1 "*) return 0 ;; esac; return 1; }

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
cmake --build "$build" --target "${targets[@]}" -j"$(nproc)"

for t in "${targets[@]}"; do
  cp "$build/fuzz/targets/$t" "$OUT/"
  cp "$src/fuzz/targets/$t.options" "$OUT/"
done

if selected fuzz_differential; then
  # libtcc's support files, and under sysinclude/ every system header the generated C reaches:
  # the headers that oracle/harness.cc, aot/runtime_header.cc and aot/codegen*.cc emit includes
  # of, and what they include in turn, as tcc itself resolves them (its -E line markers). The
  # multiarch directory is folded into sysinclude/ (its files' names do not clash with the rest).
  tcc_lib=$(tcc -vv | awk '/^install:/ { print $2 }')
  support="$OUT/aotfuzz-tcc"
  rm -rf "$support"
  mkdir -p "$support/sysinclude"
  cp -r "$tcc_lib/include" "$support/include"
  cp "$tcc_lib/libtcc1.a" "$support/"
  # The harness defines _GNU_SOURCE before its includes, which selects more of glibc's headers.
  {
    echo '#define _GNU_SOURCE'
    printf '#include <%s>\n' signal.h stdarg.h stddef.h stdint.h stdio.h stdlib.h string.h \
      sys/mman.h unistd.h
  } > "$WORK/aotfuzz-headers.c"
  tcc -std=c99 -E "$WORK/aotfuzz-headers.c" | sed -n 's/^# [0-9]* "\(\/usr\/include\/[^"]*\)".*/\1/p' \
    | sort -u | while read -r header; do
    relative=$(printf '%s\n' "${header#/usr/include/}" | sed 's|^[a-z0-9_]*-linux-gnu/||')
    if [ -e "$support/sysinclude/$relative" ]; then
      echo "build.sh: two system headers fold to sysinclude/$relative" >&2
      exit 1
    fi
    mkdir -p "$(dirname "$support/sysinclude/$relative")"
    cp "$header" "$support/sysinclude/$relative"
  done
fi

# Only the text targets take a dictionary: fuzz_pipeline and fuzz_differential feed their bytes to
# generator::decode, which reads them as choices, not tokens, so no token list helps there.
for t in fuzz_parser fuzz_pipeline_text; do
  if selected "$t"; then cp "$src/fuzz/targets/relay.dict" "$OUT/$t.dict"; fi
done

# Seed corpora: every .relay graph of corpus/ for the text targets, the byte seeds for the
# decoder targets. zip -j stores bare names; ClusterFuzz unpacks them into the target's corpus.
zip_seeds() {  # zip_seeds ARCHIVE FILE...
  rm -f "$1"
  if command -v zip > /dev/null; then
    zip -q -j "$@"
  else
    python3 -m zipfile -c "$@"
  fi
}
mapfile -t relay < <(find "$src/corpus" -name '*.relay' -type f | sort)
mapfile -t bytes < <(find "$src/fuzz/targets/seeds/fuzz_pipeline" -type f | sort)
for t in "${targets[@]}"; do
  case "$t" in
    fuzz_parser | fuzz_pipeline_text) zip_seeds "$OUT/${t}_seed_corpus.zip" "${relay[@]}" ;;
    fuzz_pipeline | fuzz_differential) zip_seeds "$OUT/${t}_seed_corpus.zip" "${bytes[@]}" ;;
  esac
done

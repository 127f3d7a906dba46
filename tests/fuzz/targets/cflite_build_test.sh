#!/bin/bash
# cflite_build_test.sh REPO WORKDIR [PYTHON]: runs .clusterfuzzlite/build.sh the way OSS-Fuzz's
# builder does (clang, its CFLAGS/CXXFLAGS, LIB_FUZZING_ENGINE, SRC/WORK/OUT), checks what it wrote
# to $OUT, then runs every target for 3 seconds on its unpacked seed corpus from inside $OUT;
# fuzz_differential with the machine's system headers and tcc's files hidden (a private mount
# namespace: needs root), as on ClusterFuzz's runners, which have neither. Last, every
# ClusterFuzzLite build step of .github/workflows must get from build.sh exactly the targets it
# names (tests/ci/cflite_targets.py, run by PYTHON, default python3, with PyYAML).
# Exits 77 (ctest: skipped) only when clang or its libFuzzer runtime is missing.
set -euo pipefail
repo=$(cd "$1" && pwd)
root=$2
python=${3:-python3}
# The default build is the one under test first; a selection left in the environment would
# change it.
unset AOTFUZZ_TARGETS CFL_EXTRA_AOTFUZZ_TARGETS
mkdir -p "$root"
root=$(cd "$root" && pwd)

if ! command -v clang > /dev/null || ! command -v clang++ > /dev/null; then
  echo "cflite_build_test: no clang; skipped"
  exit 77
fi
probe=$(mktemp -d)
trap 'rm -rf "$probe"' EXIT
printf 'extern "C" int LLVMFuzzerTestOneInput(const unsigned char*, unsigned long) { return 0; }\n' \
  > "$probe/probe.cc"
if ! clang++ -fsanitize=fuzzer "$probe/probe.cc" -o "$probe/probe" 2> "$probe/err"; then
  cat "$probe/err"
  echo "cflite_build_test: clang has no libFuzzer runtime (libclang-rt-*-dev); skipped"
  exit 77
fi

# What OSS-Fuzz's base-builder exports for an ASan + libFuzzer build.
export CC=clang CXX=clang++
export CFLAGS="-O1 -fno-omit-frame-pointer -gline-tables-only -DFUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION -fsanitize=address -fsanitize-address-use-after-scope -fsanitize=fuzzer-no-link"
export CXXFLAGS="$CFLAGS -stdlib=libc++"
export LIB_FUZZING_ENGINE=-fsanitize=fuzzer
export SRC="$root/src" WORK="$root/work" OUT="$root/out"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1
mkdir -p "$SRC" "$WORK"
rm -rf "$OUT" && mkdir -p "$OUT"
ln -sfn "$repo" "$SRC/aotfuzz"

start=$(date +%s)
bash "$repo/.clusterfuzzlite/build.sh"
echo "cflite_build_test: build.sh took $(( $(date +%s) - start )) s"

status=0
for t in fuzz_parser fuzz_pipeline fuzz_pipeline_text fuzz_differential; do
  for f in "$t" "$t.options" "${t}_seed_corpus.zip"; do
    [ -s "$OUT/$f" ] || { echo "missing \$OUT/$f"; status=1; }
  done
  # Only system libraries at run time: the runner has $OUT and /tmp, nothing we installed.
  if ldd "$OUT/$t" | grep -Ev 'linux-vdso|ld-linux|lib(c|m|dl|rt|pthread|stdc\+\+|gcc_s)\.so' \
      | grep -q .; then
    echo "$t needs more than the system libraries:"; ldd "$OUT/$t"; status=1
  fi
done
for d in fuzz_parser.dict fuzz_pipeline_text.dict; do
  [ -s "$OUT/$d" ] || { echo "missing \$OUT/$d"; status=1; }
done
for f in aotfuzz-tcc/include/stddef.h aotfuzz-tcc/libtcc1.a aotfuzz-tcc/sysinclude/stdio.h \
    aotfuzz-tcc/sysinclude/sys/mman.h; do
  [ -s "$OUT/$f" ] || { echo "missing \$OUT/$f"; status=1; }
done
[ "$status" -eq 0 ] || exit 1
tcc_lib=$(tcc -vv | awk '/^install:/ { print $2 }')

for t in fuzz_parser fuzz_pipeline fuzz_pipeline_text fuzz_differential; do
  corpus="$WORK/corpus-$t"
  rm -rf "$corpus" && mkdir -p "$corpus"
  unzip -q -o "$OUT/${t}_seed_corpus.zip" -d "$corpus"
  dict=()
  [ -f "$OUT/$t.dict" ] && dict=("-dict=$OUT/$t.dict")
  echo "== $t: $(find "$corpus" -type f | wc -l) seeds"
  hide=()
  if [ "$t" = fuzz_differential ]; then
    # What the generated C needs must come from $OUT: no /usr/include, no tcc installation.
    hide=(unshare -m bash -c 'mount -t tmpfs none /usr/include && mount -t tmpfs none "$0" &&
          test ! -e /usr/include/stdio.h && exec "$@"' "$tcc_lib")
  fi
  (cd "$OUT" && "${hide[@]}" ./"$t" "${dict[@]}" -max_total_time=3 -seed=1 -print_final_stats=1 \
     "$corpus" > "$WORK/$t.log" 2>&1) || { tail -n 60 "$WORK/$t.log"; echo "$t failed"; exit 1; }
  if [ "$t" = fuzz_differential ] && ! grep -q "libtcc in its runner" "$WORK/$t.log"; then
    tail -n 60 "$WORK/$t.log"; echo "fuzz_differential did not run its cases through libtcc"; exit 1
  fi
  grep -E 'stat::number_of_executed_units|stat::average_exec_per_sec' "$WORK/$t.log" || true
done
echo "cflite_build_test: every target built by build.sh ran its seeds without a finding"

# What the workflows' build steps get: a step that names targets in CFL_EXTRA_AOTFUZZ_TARGETS (as
# ClusterFuzzLite passes it) gets build.sh run with it, into an $OUT of its own; a step that names
# none gets the default build above. Each $OUT must hold exactly the named fuzz targets, each with
# its .options and seed corpus. The reruns reuse $WORK's build tree: seconds, not minutes.
installed() { find "$1" -maxdepth 1 -type f -perm -u+x -printf '%f\n' | sort; }
"$python" "$repo/tests/ci/cflite_targets.py" "$repo" > "$WORK/workflow-targets.txt"
[ -s "$WORK/workflow-targets.txt" ] || { echo "no ClusterFuzzLite build step in the workflows"; exit 1; }
declare -A out_of=()
while IFS=$'\t' read -r where how names; do
  read -r -a want <<< "$names"
  if [ "$how" = default ]; then
    out="$OUT"
  elif [ -n "${out_of[$names]:-}" ]; then
    out="${out_of[$names]}"
  else
    out="$root/out-$(( ${#out_of[@]} + 1 ))"
    rm -rf "$out" && mkdir -p "$out"
    log="$out.log"
    OUT="$out" CFL_EXTRA_AOTFUZZ_TARGETS="$names" bash "$repo/.clusterfuzzlite/build.sh" < /dev/null \
      > "$log" 2>&1 || { tail -n 40 "$log"; echo "$where: build.sh failed for '$names'"; exit 1; }
    out_of[$names]="$out"
  fi
  got=$(installed "$out")
  expected=$(printf '%s\n' "${want[@]}" | sort)
  if [ "$got" != "$expected" ]; then
    echo "$where names: ${expected//$'\n'/ }; build.sh installed: ${got//$'\n'/ }"
    status=1
  fi
  for t in "${want[@]}"; do
    for f in "$t.options" "${t}_seed_corpus.zip"; do
      [ -s "$out/$f" ] || { echo "$where: missing $out/$f"; status=1; }
    done
  done
  echo "cflite_build_test: $where ($how): $names"
done < "$WORK/workflow-targets.txt"
[ "$status" -eq 0 ] || exit 1
echo "cflite_build_test: every workflow build step gets exactly the targets it names"

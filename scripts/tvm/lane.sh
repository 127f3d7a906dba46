#!/usr/bin/env bash
# The real-TVM lane (not part of default CI: building TVM takes half an hour or more on 2 cores).
#
#   scripts/tvm/lane.sh [SHARED_TVM_DIR] [--quick]
#
# SHARED_TVM_DIR (default ../shared/tvm) holds TVM's source at the #9036 bug
# (tvm-src-pre9064.tar.xz) and the fix (tvm-pr9064-fix.diff); the no-LLVM adaptation a release
# needs is in scripts/tvm/patches/ (applied by build.sh --release-patches); see docs/tvm.md. The lane
#   1. builds the pre-fix TVM and the fixed TVM (scripts/tvm/build.sh; the second build reuses the
#      first's objects through ccache and recompiles the one file the fix touches),
#   2. builds aotfuzz with the ctest tier `tvm` configured for both, and runs it,
#   3. runs the lane's checks, each printed with its command and figure:
#      - a default campaign with --sut tvm on the pre-fix TVM finds the #9036 class (the fused add
#        called with fewer arguments than it takes: arity:codegen:kernel) within 10 minutes, reduces it to at most 3 adds and 3 inputs,
#        and the pytest exported from the reduced repro fails on that build;
#      - on the fixed TVM the reduced repro passes and a campaign (30 minutes; --quick: 5) has no
#        finding of that class;
#      - 1,000 generated graphs (merge on and off): every difference between the builtin
#        pipeline's partitioned module and TVM's, by signature;
#      - TVM cases per second per core;
#   4. for each release tarball in SHARED_TVM_DIR (tvm-src-v0.8.0.tar.xz, tvm-src-v0.18.0.tar.xz,
#      any tvm-src-v*.tar.xz), builds it (--release-patches) and runs:
#      - the seed graph with and without merging;
#      - 1,000 generated graphs (--quick: 200), --no-run, merge drawn: every difference between
#        the builtin pipeline's partitioned module and the release's, by signature;
#      and, for the newest release from v0.16 on, the ctest tier's rows of that release
#      (AOTFUZZ_TVM_HOME_V018: its known num_args behaviour and its bugs in docs/tvm.md);
#   5. triages every bundle of the pre-fix campaign on the three builds (pre-fix, then the
#      releases oldest first): the matrix of `aotfuzz findings --rerun`.
# Results land in build/tvm-lane/ (findings directories, logs, summary.txt).
set -euo pipefail
cd "$(dirname "$0")/../.."
repo="$(pwd)"

shared="../shared/tvm"
quick=0
for arg in "$@"; do
  case "$arg" in
    --quick) quick=1 ;;
    -*) echo "usage: scripts/tvm/lane.sh [SHARED_TVM_DIR] [--quick]" >&2; exit 2 ;;
    *) shared="$arg" ;;
  esac
done
for f in tvm-src-pre9064.tar.xz tvm-pr9064-fix.diff; do
  [ -f "$shared/$f" ] || { echo "lane: $shared/$f is missing" >&2; exit 2; }
done
shared="$(realpath "$shared")"

out="$repo/build/tvm-lane"
mkdir -p "$out"
summary="$out/summary.txt"
: > "$summary"
note() { echo "lane: $*" | tee -a "$summary" >&2; }

# 1. TVM, before and after the fix.
pre="$(scripts/tvm/build.sh "$shared/tvm-src-pre9064.tar.xz" --release-patches | tail -1)"
fixed="$(scripts/tvm/build.sh "$shared/tvm-src-pre9064.tar.xz" --release-patches \
           --patch "$shared/tvm-pr9064-fix.diff" | tail -1)"
note "pre-fix TVM: $pre"
note "fixed TVM:   $fixed"

# 2. aotfuzz, and the ctest tier `tvm`.
scripts/setup.sh release > "$out/build.log" 2>&1 || { tail -30 "$out/build.log" >&2; exit 1; }
cmake -S . -B build/tvm-tests -G Ninja -DCMAKE_BUILD_TYPE=Release -DAOTFUZZ_TESTS=ON \
      -DAOTFUZZ_TVM_HOME="$pre" -DAOTFUZZ_TVM_HOME_FIXED="$fixed" >> "$out/build.log" 2>&1 \
  && cmake --build build/tvm-tests -j "$(nproc)" >> "$out/build.log" 2>&1 \
  || { tail -30 "$out/build.log" >&2; echo "lane: the build failed (log: $out/build.log)" >&2; exit 1; }
ctest --test-dir build/tvm-tests -L tvm --output-on-failure | tee "$out/ctest.log" >&2
aotfuzz="$repo/build/tvm-tests/cli/aotfuzz"

# The #9036 class: TVM's executor passes the fused add fewer arguments than it takes, read from
# its C by the static arity check (outputs mismatch too, but TVM's ccompiler codegen also gives
# wrong outputs on broadcasting adds, a different bug: see docs/tvm.md).
is_9036() { grep -Eq '^arity:codegen:kernel$'; }
# A bundle's signature, from its verdict.json; nothing for a directory that is not a bundle.
signature_of() {
  [ -f "$1/verdict.json" ] || return 0
  /usr/bin/python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["signature"])' "$1/verdict.json"
}

# 3a. Pre-fix: found, reduced, exported.
rm -rf "$out/pre-findings"
start=$(date +%s)
# --tvm-fixed-home: a reduced finding must pass on the fixed TVM (when its original does).
"$aotfuzz" fuzz --sut tvm --tvm-home "$pre" --tvm-fixed-home "$fixed" --time 600 --seed 1 \
  --findings "$out/pre-findings" --stats "$out/pre-stats.json" > "$out/pre-campaign.log" 2>&1 || true
note "pre-fix campaign: $aotfuzz fuzz --sut tvm --tvm-home $pre --tvm-fixed-home $fixed --time 600 --seed 1 (log: $out/pre-campaign.log)"
note "  first #9036-class finding after: $(grep -m1 'new finding arity:codegen:kernel' "$out/pre-campaign.log" | sed 's/.* after \([0-9.]*s\).*/\1/')"
found=""
for b in "$out"/pre-findings/*/; do
  if signature_of "$b" | is_9036; then found="$b"; break; fi
done
if [ -z "$found" ]; then
  note "FAIL: no #9036-class finding on the pre-fix TVM in 10 minutes"
  exit 1
fi
reduced="$found/reduced.relay"
adds=$(grep -c ' add(' "$reduced" || true)
inputs=$(grep -m1 '^def @main' "$reduced" | grep -o '%[A-Za-z0-9_]*:' | wc -l)
note "found: $(signature_of "$found") in $found; reduced to $adds adds, $inputs inputs"
[ "$adds" -le 3 ] && [ "$inputs" -le 3 ] || note "FAIL: the reduced repro is larger than 3 adds, 3 inputs"
flags="$(grep -m1 '^// replay:' "$reduced" | sed 's/^\/\/ replay://' | grep -o -- ' --\(no-\)\{0,1\}merge\| --api [a-z]*\| --interface [a-z]*\| --mod-name [^ ]*' | tr '\n' ' ')"
# shellcheck disable=SC2086
if tests/tvm/exported_pytest.sh "$aotfuzz" "$pre" fail "$reduced" $flags > "$out/pytest-pre.log" 2>&1; then
  note "the exported pytest fails on the pre-fix TVM, as it should (log: $out/pytest-pre.log)"
else
  note "FAIL: the exported pytest does not fail on the pre-fix TVM (log: $out/pytest-pre.log)"
fi
# shellcheck disable=SC2086
if tests/tvm/exported_pytest.sh "$aotfuzz" "$fixed" pass "$reduced" $flags > "$out/pytest-fixed.log" 2>&1; then
  note "the exported pytest passes on the fixed TVM (log: $out/pytest-fixed.log)"
else
  note "FAIL: the exported pytest does not pass on the fixed TVM (log: $out/pytest-fixed.log)"
fi

# 3b. Fixed: the repro passes, a campaign finds nothing of the class.
# shellcheck disable=SC2086
if "$aotfuzz" run "$reduced" $flags --sut tvm --tvm-home "$fixed" > "$out/fixed-replay.log" 2>&1; then
  note "fixed TVM: the reduced repro passes"
else
  note "FAIL: fixed TVM: the reduced repro does not pass (log: $out/fixed-replay.log)"
fi
fixed_time=1800
[ "$quick" = 1 ] && fixed_time=300
rm -rf "$out/fixed-findings"
"$aotfuzz" fuzz --sut tvm --tvm-home "$fixed" --time "$fixed_time" --seed 2 \
  --findings "$out/fixed-findings" --stats "$out/fixed-stats.json" > "$out/fixed-campaign.log" 2>&1 || true
note "fixed campaign ($fixed_time s): $(grep -m1 'cases/s' "$out/fixed-campaign.log" || tail -1 "$out/fixed-campaign.log")"
for b in "$out"/fixed-findings/*/; do
  sig="$(signature_of "$b")"
  [ -n "$sig" ] || continue
  if echo "$sig" | is_9036; then note "FAIL: fixed TVM still shows the #9036 class: $b"; fi
  note "fixed TVM finding: $sig ($b)"
done

# 3c. Fidelity on 1,000 graphs.
rm -rf "$out/fidelity-findings"
"$aotfuzz" fuzz --sut tvm --tvm-home "$fixed" --cases 1000 --seed 3 --no-reduce --no-run \
  --findings "$out/fidelity-findings" --stats "$out/fidelity-stats.json" > "$out/fidelity.log" 2>&1 || true
note "1,000 graphs on the fixed TVM: $(tail -3 "$out/fidelity.log" | tr '\n' ' ')"
for b in "$out"/fidelity-findings/*/; do
  sig="$(signature_of "$b")"
  [ -n "$sig" ] || continue
  note "  $sig: $b"
done
# 4. The releases.
builds=(--tvm-build "pre9064=$pre")
for tarball in $(ls "$shared"/tvm-src-v*.tar.xz 2>/dev/null | sort -V); do
  release="$(basename "$tarball" .tar.xz)"
  release="${release#tvm-src-}"
  start=$(date +%s)
  if ! home="$(scripts/tvm/build.sh "$tarball" --release-patches 2> "$out/build-$release.log" | tail -1)"; then
    note "FAIL: $release does not build (log: $out/build-$release.log)"
    continue
  fi
  note "$release: $home (build or cache: $(( $(date +%s) - start )) s)"
  builds+=(--tvm-build "$release=$home")
  # The ctest rows of a release from v0.16 on (known behaviours, v0.18's bugs): the newest one.
  minor="${release#v0.}"; minor="${minor%%.*}"
  if [[ "$minor" =~ ^[0-9]+$ ]] && [ "$minor" -ge 16 ]; then v018="$home"; fi
  for merge in --merge --no-merge; do
    if "$aotfuzz" run corpus/seed/tvm_9036_annotated.relay $merge --mod-name my_mod --sut tvm \
         --tvm-home "$home" > "$out/seed-$release$merge.log" 2>&1; then
      note "  the seed graph passes ($merge)"
    else
      note "  the seed graph: $(grep -m1 '^signature:' "$out/seed-$release$merge.log") ($merge; log: $out/seed-$release$merge.log)"
    fi
  done
  graphs=1000
  [ "$quick" = 1 ] && graphs=200
  rm -rf "$out/fidelity-$release"
  "$aotfuzz" fuzz --sut tvm --tvm-home "$home" --cases "$graphs" --seed 3 --no-reduce --no-run \
    --findings "$out/fidelity-$release" > "$out/fidelity-$release.log" 2>&1 || true
  note "  $graphs graphs, --no-run: $(grep -m1 'cases' "$out/fidelity-$release.log" | head -1)"
  for b in "$out/fidelity-$release"/*/; do
    sig="$(signature_of "$b")"
    [ -n "$sig" ] || continue
    note "    $sig: $b"
  done
done

if [ -n "${v018:-}" ]; then
  cmake -S . -B build/tvm-tests -DAOTFUZZ_TVM_HOME_V018="$v018" >> "$out/build.log" 2>&1
  cmake --build build/tvm-tests -j "$(nproc)" >> "$out/build.log" 2>&1
  ctest --test-dir build/tvm-tests -L tvm -R v018 --output-on-failure | tee "$out/ctest-v018.log" >&2
  note "the tvm tier's rows of $v018: $(grep -m1 'tests passed' "$out/ctest-v018.log")"
fi

# 5. Triage of the pre-fix findings on every build.
"$aotfuzz" findings "$out/pre-findings" --rerun "${builds[@]}" > "$out/triage.txt" 2>&1 || true
note "triage of the pre-fix findings on $(( ${#builds[@]} / 2 )) builds:"
sed 's/^/    /' "$out/triage.txt" | tee -a "$summary" >&2
note "summary: $summary"

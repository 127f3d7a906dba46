#!/usr/bin/env bash
# Soak benchmark (not a CI test): runs one campaign for HOURS on all cores and samples, every
# INTERVAL seconds, the resident memory and open file descriptors of the campaign's processes
# (the supervisor, the campaign child, its runners and compilers), then reports their growth after
# the first 5 minutes. A leak shows as growth; the bar is under 10%.
#
#   bench/soak.sh HOURS [aotfuzz fuzz flags...]
#   AOTFUZZ=build/release/cli/aotfuzz INTERVAL=30 SOAK_DIR=/tmp/soak bench/soak.sh 1
#
# Prints one row per sample (seconds, cases done, RSS KiB, fds, processes) and a closing line;
# exits 1 when RSS or fds grew by 10% or more.
set -euo pipefail
if [[ $# -lt 1 ]] || ! [[ $1 =~ ^[0-9]+([.][0-9]+)?$ ]]; then
  echo "usage: bench/soak.sh HOURS [aotfuzz fuzz flags...]" >&2
  exit 2
fi
hours=$1
shift
here=$(cd "$(dirname "$0")/.." && pwd)
aotfuzz=${AOTFUZZ:-$here/build/release/cli/aotfuzz}
interval=${INTERVAL:-30}
dir=${SOAK_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/aotfuzz-soak-XXXXXX")}
mkdir -p "$dir"
[[ -x $aotfuzz ]] || { echo "soak.sh: no aotfuzz at $aotfuzz (cmake --preset release && cmake --build build/release)" >&2; exit 2; }
seconds=$(awk -v h="$hours" 'BEGIN { printf "%d", h * 3600 }')

"$aotfuzz" fuzz --time "$seconds" --findings "$dir/findings" --quiet "$@" >"$dir/campaign.log" 2>&1 &
root=$!
trap 'kill -TERM $root 2>/dev/null || true' INT TERM

# The process tree under $root, one pid per line.
tree() {
  local pids=$1 next
  echo "$pids"
  while [[ -n $pids ]]; do
    next=""
    for p in $pids; do
      next+=" $(cat /proc/"$p"/task/*/children 2>/dev/null || true)"
    done
    pids=$(echo $next)
    [[ -n $pids ]] && tr ' ' '\n' <<<"$pids"
  done
}

echo "soak: $aotfuzz fuzz --time $seconds $*, findings $dir/findings, sample every ${interval}s"
printf "%8s %10s %10s %6s %6s\n" seconds cases rss_kib fds procs | tee "$dir/samples"
start=$(date +%s)
while kill -0 "$root" 2>/dev/null; do
  rss=0 fds=0 procs=0
  for p in $(tree "$root"); do
    r=$(awk '/^VmRSS:/ { print $2 }' /proc/"$p"/status 2>/dev/null || true)
    [[ -n $r ]] || continue
    rss=$((rss + r))
    fds=$((fds + $(ls /proc/"$p"/fd 2>/dev/null | wc -l)))
    procs=$((procs + 1))
  done
  cases=$(awk -F: '/^cases_done/ { gsub(/ /, "", $2); print $2 }' "$dir/findings/fuzzer_stats" 2>/dev/null || true)
  printf "%8d %10s %10d %6d %6d\n" $(($(date +%s) - start)) "${cases:-0}" "$rss" "$fds" "$procs" |
    tee -a "$dir/samples"
  sleep "$interval"
done
wait "$root" || true
# Growth: the largest sample after 5 minutes against the first sample at or after 5 minutes.
awk 'NR > 1 && $1 >= 300 {
       if (!base_rss) { base_rss = $3; base_fds = $4 }
       if ($3 > max_rss) max_rss = $3
       if ($4 > max_fds) max_fds = $4
     }
     END {
       if (!base_rss) { print "soak: shorter than 5 minutes, no growth figure"; exit 0 }
       g_rss = 100 * (max_rss - base_rss) / base_rss
       g_fds = 100 * (max_fds - base_fds) / base_fds
       printf "soak: after 5 min RSS %d KiB -> max %d KiB (%+.1f%%), fds %d -> max %d (%+.1f%%)\n",
              base_rss, max_rss, g_rss, base_fds, max_fds, g_fds
       exit (g_rss >= 10 || g_fds >= 10) ? 1 : 0
     }' "$dir/samples"

#!/usr/bin/env bash
# Soak benchmark (not a CI test): runs one campaign for HOURS on all cores and samples, every
# INTERVAL seconds, the resident memory and open file descriptors of the campaign's processes
# (the supervisor, the campaign child, its runners and compilers), then reports their growth after
# the first 5 minutes (medians of the 10 minutes after the first 5 against the last 10). A leak
# shows as growth; the bar is under 10%.
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
# Growth: the median of the last 10 minutes against the median of the 10 minutes after the first
# 5 (a leak raises the level; single samples swing with the batch in flight).
awk 'NR > 1 && $1 >= 300 { t[n] = $1; rss[n] = $3; fds[n] = $4; n++ }
     function median(a, from, to,   m, i, j, v, tmp) {
       m = 0
       for (i = from; i < to; i++) tmp[m++] = a[i]
       for (i = 1; i < m; i++) { v = tmp[i]; for (j = i - 1; j >= 0 && tmp[j] > v; j--) tmp[j + 1] = tmp[j]; tmp[j + 1] = v }
       return m % 2 ? tmp[int(m / 2)] : (tmp[m / 2 - 1] + tmp[m / 2]) / 2
     }
     END {
       if (n < 2 || t[n - 1] < 1500) { print "soak: shorter than 25 minutes, no growth figure"; exit 0 }
       e1 = 0; while (e1 < n && t[e1] < 900) e1++
       s2 = n - 1; while (s2 > 0 && t[s2 - 1] >= t[n - 1] - 600) s2--
       b_rss = median(rss, 0, e1); b_fds = median(fds, 0, e1)
       l_rss = median(rss, s2, n); l_fds = median(fds, s2, n)
       g_rss = 100 * (l_rss - b_rss) / b_rss; g_fds = 100 * (l_fds - b_fds) / b_fds
       printf "soak: median RSS %d KiB (minutes 5-15) -> %d KiB (last 10 min), %+.1f%%; median fds %d -> %d, %+.1f%%\n",
              b_rss, l_rss, g_rss, b_fds, l_fds, g_fds
       exit (g_rss >= 10 || g_fds >= 10) ? 1 : 0
     }' "$dir/samples"

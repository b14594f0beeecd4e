#!/usr/bin/env bash
# Throughput of `tpu-doctor logs` on a generated log (default 1024 MiB) of realistic noise with a
# few failures, beside ripgrep (`rg -c`, one thread) and `grep -E -c` searching the same keyword
# sets, in the same run.
# Wall time of whole commands, best of RUNS (default 3) after a warm-up read; one core each.
set -euo pipefail
cd "$(dirname "$0")/.."
SIZE_MB=${SIZE_MB:-1024}
RUNS=${RUNS:-3}
scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
OUT=build/bench
mkdir -p "$OUT"
LOG=$OUT/noise_${SIZE_MB}m.log
[[ -f $LOG ]] || python3 bench/gen_noise_log.py "$SIZE_MB" "$LOG"
python3 bench/logs_keywords.py > "$OUT/keywords.ere"
python3 bench/logs_keywords.py --causes > "$OUT/cause_keywords.ere"
bytes=$(stat -c %s "$LOG")
cat "$LOG" > /dev/null  # warm the page cache
best() {  # best wall seconds of RUNS runs of "$@"
  local best=999999 t
  for _ in $(seq "$RUNS"); do
    # Output to a file, not /dev/null: GNU grep stops at the first match when it sees /dev/null.
    /usr/bin/time -f "%e" -o "$OUT/time.txt" "$@" > "$OUT/out.txt" 2>&1 || true
    t=$(tail -1 "$OUT/time.txt")
    best=$(echo "if ($t < $best) $t else $best" | bc -l)
  done
  echo "$best"
}
td=$(best build/tpu-doctor logs "$LOG" --format json)
rr=$(best rg -c -j1 -f "$OUT/keywords.ere" "$LOG")
rc=$(best rg -c -j1 -f "$OUT/cause_keywords.ere" "$LOG")
gr=$(best env LC_ALL=C grep -E -c -f "$OUT/keywords.ere" "$LOG")
gc=$(best env LC_ALL=C grep -E -c -f "$OUT/cause_keywords.ere" "$LOG")
printf "log: %s (%.0f MiB), %s keywords\n" "$LOG" "$(echo "$bytes / 1048576" | bc -l)" "$(wc -l < "$OUT/keywords.ere")"
printf "%-28s %8s s %8.2f GB/s\n" "tpu-doctor logs" "$td" "$(echo "$bytes / $td / 1000000000" | bc -l)"
printf "%-28s %8s s %8.2f GB/s\n" "rg -c -j1 (all keywords)" "$rr" "$(echo "$bytes / $rr / 1000000000" | bc -l)"
printf "%-28s %8s s %8.2f GB/s\n" "rg -c -j1 (cause keywords)" "$rc" "$(echo "$bytes / $rc / 1000000000" | bc -l)"
printf "%-28s %8s s %8.2f GB/s\n" "grep -E -c (all keywords)" "$gr" "$(echo "$bytes / $gr / 1000000000" | bc -l)"
printf "%-28s %8s s %8.2f GB/s\n" "grep -E -c (cause keywords)" "$gc" "$(echo "$bytes / $gc / 1000000000" | bc -l)"
build/tpu-doctor logs "$LOG" | head -4

#!/usr/bin/env bash
# Runs a tpu-doctor binary over every model and log fixture in testdata/ and writes each run's
# stdout, stderr and exit code under OUTDIR, so two builds can be compared byte for byte:
#
#   scripts/snapshot_outputs.sh build-old/tpu-doctor /tmp/before
#   scripts/snapshot_outputs.sh build/tpu-doctor /tmp/after
#   diff -r /tmp/before /tmp/after
#
# Used to show that a refactor changed no output (text and JSON of check, estimate, dump-ir,
# logs and targets).
set -uo pipefail
cd "$(dirname "$0")/.."
BIN=$(realpath "$1")
OUT=$2
mkdir -p "$OUT"

run() {  # run NAME ARGS...
  local name=$1
  shift
  "$BIN" "$@" >"$OUT/$name.out" 2>"$OUT/$name.err"
  echo $? >"$OUT/$name.code"
}

mapfile -t models < <(find testdata -type f \
  \( -path 'testdata/cli/*' -o -path 'testdata/logs/*' -o -name '*.md' -o -name '*.jsonl' \
     -o -name 'manifest*' -o -name '*.txt.expected' \) -prune -o -type f -print | sort)
for m in "${models[@]}"; do
  key=$(echo "$m" | tr '/' '_')
  run "check_text_$key" check "$m"
  run "check_json_$key" check "$m" --format json
  run "check_train_$key" check "$m" --train --batch 8 --format json
  run "estimate_text_$key" estimate "$m" --batch 8 --targets tpu-v5e,tpu-v6e-8,nvidia-h100
  run "estimate_json_$key" estimate "$m" --batch 8 --train --format json
  run "dumpir_$key" dump-ir "$m" --batch 4
done
for l in testdata/logs/*.log testdata/logs/*.gz; do
  key=$(echo "$l" | tr '/' '_')
  run "logs_text_$key" logs "$l"
  run "logs_json_$key" logs "$l" --format json
done
run targets_text targets
run targets_json targets --format json
run rules rules
echo "snapshot: $(ls "$OUT" | wc -l) files in $OUT"

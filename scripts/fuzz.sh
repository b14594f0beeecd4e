#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/fuzz_targets.h) with Clang, ASan and UBSan into build-fuzz/
# and runs them.
#   scripts/fuzz.sh TARGET [SECONDS]     one target (default 60 s)
#   scripts/fuzz.sh all [SECONDS]        every target for SECONDS each, $JOBS at a time (default:
#                                        the cores), then a table: execs/s, coverage, crashes
# Targets: config hlo job keras keras_json logs onnx pt2 script stablehlo tf tfpbtxt.
# Seeds come from testdata/ (read only); new inputs go to build-fuzz/corpus/<target>/, crashes to
# build-fuzz/crashes/<target>/, logs to build-fuzz/logs/<target>.log. A crash belongs in
# testdata/fuzz/<target>/ once fixed: tests/fuzz_regressions_test.cc replays that folder in CI.
set -euo pipefail
cd "$(dirname "$0")/.."
TARGETS=(config hlo job keras keras_json logs onnx pt2 script stablehlo tf tfpbtxt)
target=${1:?usage: scripts/fuzz.sh TARGET|all [SECONDS]}
seconds=${2:-60}

if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  bash scripts/setup.sh
  apt-get install -y --no-install-recommends clang libclang-rt-dev >/dev/null 2>&1 ||
    apt-get install -y --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
CC=clang CXX=clang++ BUILD_DIR=build-fuzz scripts/build.sh -DTPUD_BUILD_FUZZERS=ON -DTPUD_BUILD_TESTS=OFF \
  -DTPUD_BUILD_BENCH=OFF >&2

# The seed folders of a target (the regression corpus first).
seeds() {
  local t=$1
  echo "testdata/fuzz/$t"
  case "$t" in
    config) echo examples/configs ;;
    hlo) echo testdata/jax testdata/xla_real testdata/rules/XLA001 ;;
    job) echo testdata/jobs build-fuzz/seeds/job ;;
    keras) echo testdata/keras ;;
    keras_json) echo build-fuzz/seeds/keras_json ;;
    logs) echo testdata/logs build-fuzz/seeds/logs ;;
    onnx) echo testdata/models testdata/rules/TPU001 testdata/rules/SHP001 ;;
    pt2) echo testdata/pt2 ;;
    script) echo testdata/scripts ;;
    stablehlo) echo testdata/jax testdata/xla_real ;;
    tf) echo testdata/tf/graphdef testdata/tf/metagraph testdata/tf/rust_keras_single_input testdata/tf/tfnet_tf2_conv_inference ;;
    tfpbtxt) echo testdata/tf/tfdata testdata/tfdata testdata/rules/PIPE004 ;;
  esac
}

# Seeds that are not files of their own in testdata: the real logs of the jsonl corpora, the
# Keras JSON configs, the job files plan --emit writes.
make_seeds() {
  mkdir -p build-fuzz/seeds/logs build-fuzz/seeds/keras_json build-fuzz/seeds/job
  python3 - <<'EOF'
import json, pathlib
out = pathlib.Path("build-fuzz/seeds/logs")
for src in sorted(pathlib.Path("testdata/logs").glob("*.jsonl")):
    for i, line in enumerate(src.read_text().splitlines()):
        (out / f"{src.stem}_{i}.log").write_text(json.loads(line)["log"])
EOF
  cp testdata/keras/*.json build-fuzz/seeds/keras_json/
  for dir in testdata/plan/*/; do
    for f in "$dir"*; do cp "$f" "build-fuzz/seeds/job/$(basename "$dir")_$(basename "$f")"; done
  done
}

run_one() {
  local t=$1
  local dirs=()
  for d in $(seeds "$t"); do [[ -d $d ]] && dirs+=("$d"); done
  mkdir -p "build-fuzz/corpus/$t" "build-fuzz/crashes/$t" build-fuzz/logs
  "build-fuzz/${t}_fuzz" "build-fuzz/corpus/$t" "${dirs[@]}" -max_total_time="$seconds" \
    -max_len=1048576 -rss_limit_mb=2048 -timeout=30 -artifact_prefix="build-fuzz/crashes/$t/" \
    -print_final_stats=1 >"build-fuzz/logs/$t.log" 2>&1 || true
}

# target, execs/s, coverage (edges) and features at the end, crashes (files in crashes/).
summarize() {
  printf '%-11s %10s %8s %8s %8s\n' target execs/s cov ft crashes
  for t in "$@"; do
    local log=build-fuzz/logs/$t.log
    local execs secs last cov ft crashes
    execs=$(awk '/stat::number_of_executed_units:/ {v = $2} END {print v}' "$log")
    secs=$(awk '/stat::average_exec_per_sec:/ {v = $2} END {print v}' "$log")
    last=$(grep -E '^#[0-9]+' "$log" | grep -o 'cov: [0-9]* ft: [0-9]*' | tail -1)
    cov=$(echo "$last" | awk '{print $2}')
    ft=$(echo "$last" | awk '{print $4}')
    crashes=$(find "build-fuzz/crashes/$t" -type f | wc -l)
    printf '%-11s %10s %8s %8s %8s   (%s runs)\n' "$t" "${secs:-?}" "${cov:-?}" "${ft:-?}" "$crashes" "${execs:-?}"
  done
}

make_seeds
if [[ $target == all ]]; then
  jobs=${JOBS:-$(nproc)}
  for t in "${TARGETS[@]}"; do
    while (($(jobs -rp | wc -l) >= jobs)); do wait -n; done
    echo "fuzz: $t for ${seconds}s" >&2
    run_one "$t" &
  done
  wait
  summarize "${TARGETS[@]}"
  total=$(find build-fuzz/crashes -type f | wc -l)
  exit $((total > 0))
fi
[[ " ${TARGETS[*]} " == *" $target "* ]] || { echo "unknown fuzz target: $target" >&2; exit 2; }
run_one "$target"
tail -5 "build-fuzz/logs/$target.log"
summarize "$target"

#!/usr/bin/env bash
# XLA programs: text parse/load throughput on a generated 67 MB HLO module and its StableHLO twin,
# and `tpu-doctor check` latency on the corpus programs (testdata/jax, testdata/xla_real): in
# process (Google Benchmark, load + every check) and as a whole command (median wall of RUNS).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-5}
scripts/setup.sh >/dev/null
scripts/build.sh >/dev/null
echo "throughput (median of 3):"
build/tpudoctor_bench --benchmark_filter='BM_(Parse|Load)(Hlo|StableHlo)/' --benchmark_repetitions=3 \
  --benchmark_report_aggregates_only=true 2>/dev/null | grep -E "_median" |
  awk '{printf "  %-28s %8s ms  %s\n", $1, $2, $NF}'
echo
echo "check latency, in process (load + checks):"
build/tpudoctor_bench --benchmark_filter='BM_CheckProgram' --benchmark_min_time=0.1 2>/dev/null |
  grep -E "^BM_" | awk '{sub("BM_CheckProgram/", "", $1); printf "  %-88s %9s ms\n", $1, $2}'
echo
echo "check latency, whole command (median wall of $RUNS runs):"
for f in testdata/jax/*.opt_hlo.txt testdata/jax/*.stablehlo.mlir \
         testdata/xla_real/*llama31*.hlo testdata/xla_real/*kimi*.mlir; do
  read -r ms _ < <(/usr/bin/python3 bench/timeit.py "$RUNS" -- build/tpu-doctor check "$f" --fail-on never)
  printf "  %-88s %9s ms\n" "$f" "$ms"
done

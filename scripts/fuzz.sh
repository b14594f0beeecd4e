#!/usr/bin/env bash
# Builds the libFuzzer targets with Clang, ASan and UBSan into build-fuzz/ and runs one of them.
#   scripts/fuzz.sh hlo|stablehlo|onnx|pt2|keras|tf|tfpbtxt [SECONDS]
# Seeds come from testdata/ (read only); new inputs go to build-fuzz/corpus/<target>/, crashes to
# build-fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh hlo|stablehlo|onnx|pt2|keras|tf|tfpbtxt [SECONDS]}
seconds=${2:-60}
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  bash scripts/setup.sh
  apt-get install -y --no-install-recommends clang libclang-rt-dev >/dev/null 2>&1 ||
    apt-get install -y --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi
CXX=clang++ BUILD_DIR=build-fuzz scripts/build.sh -DTPUD_BUILD_FUZZERS=ON -DTPUD_BUILD_TESTS=OFF \
  -DTPUD_BUILD_BENCH=OFF >&2
case "$target" in
  hlo) seeds=(testdata/jax testdata/xla_real testdata/rules/XLA001 testdata/bad) ;;
  stablehlo) seeds=(testdata/jax testdata/xla_real) ;;
  onnx) seeds=(testdata/models testdata/rules/TPU001 testdata/rules/SHP001 testdata/bad) ;;
  pt2) seeds=(testdata/pt2) ;;
  keras) seeds=(testdata/keras) ;;
  tf) seeds=(testdata/tf/graphdef testdata/tf/metagraph testdata/tf/rust_keras_single_input testdata/tf/tfnet_tf2_conv_inference) ;;
  tfpbtxt) seeds=(testdata/tf/tfdata testdata/tfdata testdata/rules/PIPE004) ;;
  *) echo "unknown fuzz target: $target" >&2; exit 2 ;;
esac
mkdir -p "build-fuzz/corpus/$target" build-fuzz/crashes
"build-fuzz/${target}_fuzz" "build-fuzz/corpus/$target" "${seeds[@]}" -max_total_time="$seconds" \
  -max_len=1048576 -rss_limit_mb=4096 -timeout=60 -artifact_prefix=build-fuzz/crashes/ \
  -print_final_stats=1

#include "src/cost/rates.h"

#include <algorithm>
#include <cmath>

#include "tpudoctor/support/strings.h"

namespace tpudoctor {
namespace {

Rates ChipRates(const TargetSpec& t, Precision p) {
  Rates r;
  r.bandwidth = t.hbm_gbps.value_or(0) * 1e9;
  const double bf16 = t.bf16_tflops.value_or(0) * 1e12;
  const double fp16 = t.fp16_tflops.value_or(0) * 1e12;
  // XLA on a TPU computes an f32 matmul as one bf16 pass unless the program asks for more (its
  // DEFAULT precision, what JAX, PyTorch/XLA and TensorFlow leave in place; HIGH takes 3 passes,
  // HIGHEST 6).
  if (p == Precision::kFp16 && t.is_tpu()) {
    // float16 is not a TPU type: XLA computes it through float32.
    r.matrix_flops = bf16;
    r.matrix_note =
        "fp16 is not native on TPUs: matmuls computed in fp32, as one bf16 pass (XLA's DEFAULT "
        "precision)";
    return r;
  }
  if (p == Precision::kFp16 || (p != Precision::kFp32 && bf16 <= 0 && fp16 > 0)) {
    // The precision users run on a GPU without bf16 (V100, T4) is fp16 autocast.
    r.matrix_flops = fp16 > 0 ? fp16 : bf16;
    r.matrix_note = p == Precision::kFp16
                        ? "fp16 matmuls on tensor cores"
                        : "no bf16 on this GPU: mixed precision runs as fp16 autocast (with loss "
                          "scaling) on tensor cores, what users run here";
    if (r.matrix_flops > 0) return r;
  }
  if (p == Precision::kFp8) {
    const double fp8 = t.fp8_tflops.value_or(0) * 1e12;
    if (fp8 > 0) {
      const double share = t.fp8_matmul_share.value_or(1);
      r.matrix_flops = fp8 * share;
      r.peak_flops = fp8;
      r.matrix_note =
          share < 1 ? "fp8 matmuls at " + FormatFixed(share, 2) +
                          " x the fp8 peak (fp8 matmuls reach that much less of their peak than "
                          "bf16 ones of theirs on this chip: the target's fp8_matmul_share, with "
                          "its source; operands quantized per tensor; the rest bf16)"
                    : "fp8 matmuls at the fp8 peak (operands quantized per tensor; attention and "
                      "the rest "
                      "bf16)";
      return r;
    }
    r.matrix_flops = bf16 > 0 ? bf16 : fp16;
    r.matrix_note = "no fp8 matmul unit on this chip: fp8 runs at the 16-bit rate";
    if (r.matrix_flops > 0) return r;
  }
  if (p == Precision::kInt8) {
    const double int8 = t.int8_tops.value_or(0) * 1e12;
    const double sixteen = bf16 > 0 ? bf16 : fp16;
    const double share = t.int8_matmul_share.value_or(1);
    r.matrix_flops = std::max(int8 * share, sixteen);
    r.peak_flops = std::max(int8, sixteen);
    r.matrix_note =
        int8 * share <= sixteen
            ? "no int8 matmul rate above the 16-bit one on this chip: int8 runs at the 16-bit rate"
        : share < 1
            ? "int8 weight matmuls (AQT: forward, data and weight gradients) at " +
                  FormatFixed(share, 2) +
                  " x the int8 peak (AQT's quantized matmuls reach that much less of their peak "
                  "than bf16 ones of theirs on this chip: the target's int8_matmul_share, with its "
                  "source); attention and the rest bf16"
            : "int8 weight matmuls (AQT: forward, data and weight gradients) at the int8 peak; "
              "attention and the rest bf16";
    if (r.matrix_flops > 0) return r;
  }
  if (p != Precision::kFp32) {
    if (bf16 > 0) {
      r.matrix_flops = bf16;
      r.matrix_note = "bf16 matmuls at the bf16 peak";
    } else {
      r.matrix_flops = t.fp32_tflops.value_or(0) * 1e12;
      r.matrix_note = "no 16-bit matmul unit: 16-bit runs at the fp32 rate";
    }
    return r;
  }
  if (t.is_tpu()) {
    r.matrix_flops = bf16;
    r.matrix_note = "fp32 matmuls as one bf16 pass (XLA's DEFAULT precision on TPUs; HIGH takes " +
                    std::to_string(std::max(1, t.fp32_matmul_passes)) + ")";
  } else if (t.tf32) {
    r.matrix_flops = bf16 / 2;
    r.matrix_note = "fp32 matmuls as TF32 at half the bf16 rate";
  } else {
    r.matrix_flops = t.fp32_tflops.value_or(0) * 1e12;
    r.matrix_note = "fp32 matmuls at the fp32 rate (no TF32)";
  }
  return r;
}

}  // namespace

double PaddedFlops(const MatmulDims& d, const TargetSpec& t) {
  if (!t.is_tpu() || !t.mxu_dim) return 2 * d.batch * d.m * d.n * d.k;
  const double mxu = *t.mxu_dim;
  const double rows = t.tiling ? t.tiling->Rows(32) : 8;
  return 2 * d.batch * RoundUp(d.m, rows) * RoundUp(d.n, mxu) * RoundUp(d.k, mxu);
}

Rates RatesFor(const TargetSpec& t, Precision p) {
  Rates r = ChipRates(t, p);
  if (r.peak_flops <= 0) r.peak_flops = r.matrix_flops;
  const double devices = std::max(1, t.devices_per_chip);
  r.matrix_flops /= devices;
  r.peak_flops /= devices;
  r.bandwidth /= devices;
  return r;
}

}  // namespace tpudoctor

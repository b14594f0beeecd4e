// Peak rates of one device at a precision, and matrix FLOPs padded to the MXU: the first stage of
// the estimate. Private to src/cost.
#pragma once

#include <cmath>
#include <string>

#include "tpudoctor/cost/estimate.h"
#include "tpudoctor/cost/op_cost.h"
#include "tpudoctor/target/target.h"

namespace tpudoctor {

// `v` rounded up to a multiple of `m` (unchanged when m <= 1).
inline double RoundUp(double v, double m) { return m <= 1 ? v : std::ceil(v / m) * m; }

struct Rates {
  double matrix_flops = 0;  // FLOP/s the matmuls run at, at the chosen precision
  // The datasheet peak of that precision, what MFU is measured against: matrix_flops before an
  // fp8 or int8 share of it (TargetSpec::fp8_matmul_share, int8_matmul_share); 0: matrix_flops.
  double peak_flops = 0;
  double bandwidth = 0;  // bytes/s
  std::string matrix_note;
};

// The rates of one device: v2/v3 chips are two TensorCores that frameworks drive as two devices,
// TPU7x two chiplets; each gets half the chip's peak and bandwidth.
Rates RatesFor(const TargetSpec& t, Precision p);

}  // namespace tpudoctor

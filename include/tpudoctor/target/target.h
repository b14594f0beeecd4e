// TargetSpec: one accelerator, as data. Every figure comes from data/targets/NAME.json (embedded
// into the binary), where it carries its source; nothing about hardware is a constant in code.
//
// Checks ask a target how it treats a dtype (native, slow, unsupported); the cost models (a later
// issue) read its peak rates, HBM, bandwidth, MXU size and price.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "tpudoctor/ir/dtype.h"
#include "tpudoctor/support/result.h"

namespace tpudoctor {

enum class DTypeSupport : std::uint8_t { kNative, kSlow, kUnsupported };

struct DTypeRule {
  DTypeSupport support = DTypeSupport::kNative;
  std::string why;     // one sentence, for the finding
  std::string source;  // where the fact comes from
};

struct TargetSpec {
  std::string name;          // "tpu-v5e"
  std::string display_name;  // "Cloud TPU v5e"
  std::string kind;          // "tpu" or "gpu"
  int chips_per_host = 0;
  int cores_per_chip = 0;
  // Devices a framework sees per chip: 2 on v2/v3 (one per TensorCore) and TPU7x (two chiplets),
  // 1 where the cores form one megacore device (v4, v5p) or there is one core (v5e, v6e).
  int devices_per_chip = 1;
  std::optional<int> mxu_per_core;
  std::optional<int> mxu_dim;
  std::optional<double> bf16_tflops;
  std::optional<double> int8_tops;
  std::optional<double> fp8_tflops;
  // The share of the fp8 peak that fp8 matmuls reach, over the share of the bf16 peak that bf16
  // matmuls of the same shapes reach (measured; absent: 1, fp8 as efficient as bf16).
  std::optional<double> fp8_matmul_share;
  // The same for int8 under AQT (MaxText's quantization=int8): the share of the int8 peak its
  // quantized matmuls reach, over bf16's share of the bf16 peak (absent: 1).
  std::optional<double> int8_matmul_share;
  // GPUs: the share of the bf16 peak each fused-attention kernel that runs on the chip reaches
  // (`flash-attention-1`, `flash-attention-2`, `flash-attention-3`, `cudnn`; sources in
  // `sources`). `--attention-kernel` picks one; without it the runtime's calibration decides.
  std::map<std::string, double> attention_kernels;
  std::optional<double> fp32_tflops;
  std::optional<double>
      fp16_tflops;  // fp16 on tensor cores; absent: as bf16 (GPUs), not native (TPUs)
  std::optional<double> hbm_gib;
  std::optional<double> hbm_gbps;
  std::optional<double> ici_gbps;
  // The time one small all-reduce takes between its devices whatever its size (measured; absent:
  // none charged): what a tensor-parallel decode step pays per collective beyond its bytes.
  std::optional<double> collective_latency_us;
  std::optional<double> dcn_gbps;  // data-center network per chip (GB/s), between slices
  // GPUs: each GPU's share of its host's scale-out network (InfiniBand or RoCE NICs; GB/s one
  // way), what a collective whose group spans hosts runs at instead of NVLink's bandwidth.
  std::optional<double> scaleout_gbps;
  // Targets whose fitted efficiency factors this one borrows, nearest first, when no published
  // run of its own was fitted (data/calibration/RUNTIME-TARGET.json).
  std::vector<std::string> calibration_siblings;
  std::optional<double> price_usd_per_chip_hour;
  // Whether the price includes the host VM the accelerator is attached to (a TPU's chip-hour, a
  // GPU instance's share); false: the accelerator alone, the host billed on top.
  bool price_includes_host = true;
  std::map<DType, DTypeRule> dtypes;  // dtypes not listed are native
  // TPU memory tiling (absent on GPUs): pad the minor dim to `minor`, the second-minor dim to
  // second_minor_by_bits[bits] (2 or 4 when it is that small), rank-1 arrays to rank1_elements.
  struct Tiling {
    int minor = 128;
    std::map<int, int> second_minor_by_bits;
    int rank1_elements = 1024;
    int pred_bytes = 4;
    // Rows of a tile of `bits`-wide elements (8 for 32-bit; the f32 tile's 8 is also the row
    // granularity of the MXU's inputs and of a per-core batch).
    int Rows(int bits) const {
      auto it = second_minor_by_bits.find(bits);
      return it == second_minor_by_bits.end() ? 8 : it->second;
    }
  };
  std::optional<Tiling> tiling;
  int fp32_matmul_passes = 0;  // TPUs: bf16 passes per fp32 matmul at precision HIGH (DEFAULT: 1)
  bool tf32 = false;
  // What the number in a slice name counts: "cores" (v2-8, v4-128, v5p-1024: TensorCores) or
  // "chips" (v5e-8, v6e-256, GPUs).
  std::string slice_counts = "chips";
  // TPUs: the most chips one slice (one ICI domain) can have; a larger job runs several slices
  // over the data-centre network (--slices). Unset for GPUs.
  std::optional<int> max_slice_chips;
  std::vector<std::string> sources;
  std::string notes;

  bool is_tpu() const { return kind == "tpu"; }
  // The links collectives between `chips` of a slice run over, in words: ICI on TPUs, NVLink
  // within a GPU host (and InfiniBand between hosts).
  std::string Interconnect(int chips) const;
  DTypeRule RuleFor(DType dtype) const;
};

// All targets, sorted by name.
const std::vector<TargetSpec>& AllTargets();
// The fused-attention kernels a GPU target may list a rate for (TargetSpec::attention_kernels),
// as `--attention-kernel` names them.
const std::vector<std::string>& AttentionKernelNames();
Result<const TargetSpec*> FindTarget(const std::string& name);

// A target name with an optional slice size: "tpu-v5e" (1 chip), "tpu-v5e-8" (8 chips),
// "tpu-v5p-128" (64 chips: v5p names count TensorCores), "nvidia-h100-8" (8 GPUs).
struct SliceTarget {
  const TargetSpec* target = nullptr;
  int chips = 1;
  std::string name;  // as given
};
Result<SliceTarget> FindSliceTarget(const std::string& name);
inline constexpr const char* kDefaultTarget = "tpu-v5e";

}  // namespace tpudoctor

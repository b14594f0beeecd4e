#!/usr/bin/env python3
"""MLPerf Training's ResNet-50 runs (rounds 0.7-4.0) beside tpu-doctor's prediction.

bench/data/mlperf_training_resnet.csv holds what bench/mlperf_resnet_extract.py reads from every
ResNet-50 result of github.com/mlcommons/training_results_v{0.7,...,4.0}: each system's training
images a second (the median over its runs, evaluations left out), its global batch, its
accelerators and framework. Every row whose accelerator has a tpu-doctor target and whose
implementation is one of the two below is predicted, as that implementation runs:

- NVIDIA's MXNet implementation (every GPU row whose framework names MXNet, whoever submitted
  it): fp16 weights and gradients with fp32 master weights, NHWC convolutions (`--precision
  mixed --channels-last`), `--runtime compiled`. Its run scripts build the network in float16
  (`--dtype float16`) and its optimizer keeps an fp32 copy (`multi_precision`), so the
  gradients Horovod all-reduces are fp16; it reduces them all as one group in the optimizer's
  update (`MXNET_HOROVOD_NUM_GROUPS=1`), after the backward pass, as the estimate's plain
  all-reduce does. Its network is written with fused operators — a convolution that applies the
  previous batch norm's scale, bias and ReLU on load and emits its own statistics, a batch
  norm fused with the residual add and ReLU — and later rounds replay the step as CUDA graphs:
  kernels formed from several ops and launched without per-op host work, which is what the
  `compiled` execution model describes, not `eager`'s one kernel per op.
- Google's TPU implementations (TensorFlow, JAX): XLA (every TPU program), bf16. Round 0.7's
  v3-8192 runs (4,096 chips: four v3 pods, a "multipod" Cloud TPU does not sell as one slice)
  are predicted as four v3-2048 slices over the data-centre network (`--slices 4 --dcn data`);
  the first prediction took them as one slice, which `estimate` has refused since session 34.

The batch a device takes is the global batch over the devices (a TensorCore of a v2 or v3
chip, a chip of v4 and every GPU); the optimizer (LARS) is costed as `momentum`, which reads
and writes the same state. The model is the bundled ONNX export of torchvision's ResNet-50,
the v1.5 network MLPerf trains. GPUs whose target tpu-doctor lacks (PCIe cards, A30, L40S, the
96 GB H100) and V100 rows that do not say which V100 are left out, as are other
implementations (TensorFlow on GPUs, PyTorch, MindSpore) and copies of one run submitted twice
(the same system and figure).

This batch was added in session 34 and predicted once before anything changed for it (held
out): 118 rows, median absolute error 15.7%, 109 within 25%, none called "does not fit". That
first prediction took the MXNet rows as `--precision fp16` (autocast: fp32 weights, so fp32
gradients all-reduced): multi-node rows read -6..-28% while single nodes read +9..+32%. Read
from the implementation (common/fit.py, run_and_time.sh of NVIDIA's
benchmarks/resnet/implementations/mxnet), the network runs in float16 with fp32 master
weights: `mixed`, which halves the gradient exchange. That is the only change since.

    python3 bench/mlperf_resnet_validate.py [--binary build/tpu-doctor] [--runtime RUNTIME]

`--runtime` replaces `compiled` for the MXNet rows (to see what `eager` would have said).
Prints each row, then per accelerator and overall the median absolute error, the rows within
25%, and how many were called "does not fit".
"""
import argparse
import csv
import functools
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mlperf_training_validate import summary  # noqa: E402
from published_validate import RESNET, ROOT, run_estimate  # noqa: E402

CSV = os.path.join(ROOT, "bench", "data", "mlperf_training_resnet.csv")


def gpu_target(accelerator):
    """The tpu-doctor GPU a system description names, or None."""
    name = accelerator.upper()
    if "PCIE" in name:
        return None
    if "V100-SXM2-16GB" in name:
        return "nvidia-v100"
    if "V100-SXM3-32GB" in name or "V100-SXM2-32GB" in name:
        return "nvidia-v100-32gb"
    if "A100" in name and "SXM" in name:
        return "nvidia-a100-80gb" if "80GB" in name else "nvidia-a100" if "40GB" in name else None
    if "H100" in name and "SXM" in name and "80GB" in name:
        return "nvidia-h100"
    if "H200" in name and "141GB" in name:
        return "nvidia-h200"
    return None


@functools.lru_cache(maxsize=None)
def tpu_spec(generation):
    """data/targets/tpu-GENERATION.json, read once."""
    with open(os.path.join(ROOT, "data", "targets", f"tpu-{generation}.json")) as f:
        return json.load(f)


def how_it_ran(row, mxnet_runtime):
    """(target, devices, extra estimate options) of a row, or None when it is left out."""
    accelerators = int(row["accelerators"])
    tpu = re.match(r"tpu-(v\d)-(\d+)", row["system"])
    if tpu and row["submitter"] == "Google":
        generation, size = tpu.groups()
        devices = accelerators * 2 if generation in ("v2", "v3") else accelerators
        # Beyond a pod (v0.7's 4,096-chip v3 "multipod"), pods of the largest slice over DCN.
        spec = tpu_spec(generation)
        pod = spec["max_slice_chips"]
        if accelerators > pod:
            per_chip = 2 if spec.get("slice_counts") == "cores" else 1
            return (f"tpu-{generation}-{pod * per_chip}", devices,
                    ["--slices", str(accelerators // pod), "--dcn", "data"])
        return f"tpu-{generation}-{size}", devices, []
    target = gpu_target(row["accelerator"])
    if target and "mxnet" in row["framework"].lower() and accelerators > 0:
        suffix = f"-{accelerators}" if accelerators > 1 else ""
        return target + suffix, accelerators, ["--precision", "mixed", "--channels-last",
                                               "--runtime", mxnet_runtime]
    return None


def predict(binary, row, mxnet_runtime):
    """(published images/s, predicted, fits) of a row, or None when it is left out."""
    ran = how_it_ran(row, mxnet_runtime)
    if ran is None:
        return None
    target, devices, options = ran
    batch = int(row["global_batch"]) // devices
    e = run_estimate([binary, "estimate", RESNET, "--train", "--targets", target, "--batch",
                      str(batch), "--optimizer", "momentum", "--format", "json"] + options)
    return float(row["images_per_s"]), e["samples_per_s"], e["fits"], target, batch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tpu-doctor"))
    ap.add_argument("--runtime", default="compiled", help="the MXNet rows' execution model")
    args = ap.parse_args()
    seen, by_kind = set(), {}
    print(f"{'round':<5} {'submitter':<14} {'system':<40} {'target':<20} {'batch':>5} "
          f"{'published':>10} {'predicted':>10}  error  (images/s)")
    for row in csv.DictReader(open(CSV, newline="")):
        copy = (row["system"], row["images_per_s"])
        if copy in seen:
            continue
        seen.add(copy)
        result = predict(args.binary, row, args.runtime)
        if result is None:
            continue
        published, predicted, fits, target, batch = result
        err = predicted / published - 1
        kind = "-".join(target.split("-")[:2])
        errors, not_fitting = by_kind.setdefault(kind, ([], [0]))
        errors.append(abs(err))
        not_fitting[0] += not fits
        print(f"{row['round']:<5} {row['submitter'][:14]:<14} {row['system'][:40]:<40} "
              f"{target:<20} {batch:>5} {published:>10.0f} {predicted:>10.0f} {err:+6.1%}"
              + ("" if fits else "  (called 'does not fit')"))
    print()
    for kind, (errors, not_fitting) in sorted(by_kind.items()):
        summary(kind, errors, not_fitting[0])
    summary("all", [e for errors, _ in by_kind.values() for e in errors],
            sum(n[0] for _, n in by_kind.values()))


if __name__ == "__main__":
    main()

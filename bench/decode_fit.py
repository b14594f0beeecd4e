#!/usr/bin/env python3
"""How a GPU decode step's matmuls overlap their weight reads, fitted on one GPU and tried on the
other (the serving model's matrix_memory_overlap for cuBLAS kernels).

    python3 bench/decode_fit.py

Reads the decode steps measured by bench/device_decode_layers.py (bench/data/h200_*.csv and
h100_*.csv: a LLaMA-7B or Llama-70B layer at 16-512 sequences in flight and 256 or 2048 tokens
of context, bf16 or fp8 matmuls, replayed as a CUDA graph; on the H100 also one GPU's shard of
the layer split 2 and 4 ways, `_tp2`/`_tp4`, and on the H200 contexts of 8K-32K tokens, `_long`,
which no fit uses) and predicts each the way
`estimate --serve` costs a decode step, from the datasheet rates (data/targets/*.json) and the
compiled-gpu calibration's shares of them:

    layer = kernel(weight reads, matmul FLOPs) + kernel(KV reads, attention FLOPs)
            + kernels x launch cost
    kernel(m, c) = max(m, c) + (1 - overlap) x min(m, c)

`overlap` (1: the roofline's max; 0: the sum) and the per-kernel cost are chosen on one GPU by
the median |error| and reported on the other, which was not used; no published run is looked at.
"""
import csv
import functools
import json
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DIMS = {"llama-7b": (4096, 11008, 32, 32), "llama-70b": (8192, 28672, 64, 8)}
# Kernels one layer of bench/device_decode_layers.py launches: two RMSNorms of eight elementwise
# kernels each, four matmuls, two cache writes, attention, two residual adds, SiLU and product;
# fp8 adds a cast before each matmul.
KERNELS = {"bf16": 27, "fp8": 31}


def read_json(*path):
    with open(os.path.join(ROOT, *path)) as f:
        return json.load(f)


# Read once: the fit asks for them for every point of its grid.
@functools.lru_cache(maxsize=None)
def calibration():
    return read_json("data", "calibration", "compiled-gpu.json")


@functools.lru_cache(maxsize=None)
def rates(target):
    t = read_json("data", "targets", target + ".json")
    cal = calibration()
    return {"bandwidth": t["hbm_gbps"] * 1e9 * cal["memory_efficiency"],
            "bf16": t["peak_tflops"]["bf16"] * 1e12 * cal["matrix_efficiency"],
            "fp8": t["peak_tflops"]["fp8"] * 1e12 * t.get("fp8_matmul_share", 1) *
            cal["matrix_efficiency"]}


@functools.lru_cache(maxsize=None)
def measured(gpu, suffix=""):
    path = os.path.join(ROOT, "bench", "data", gpu + "_decode_layers" + suffix + ".csv")
    with open(path) as f:
        rows = [r for r in csv.reader(f) if r and not r[0].startswith("#") and r[0] != "model"]
    return [(r[0], r[1], int(r[2]), int(r[3]), float(r[4])) for r in rows]


def dims(model):
    """A layer's dims, or one tensor-parallel shard's ("llama-70b/tp2")."""
    name, _, tp = model.partition("/tp")
    hidden, ffn, heads, kv = DIMS[name]
    tp = int(tp or 1)
    return hidden, ffn // tp, heads // tp, max(1, kv // tp)


def predict(rate, model, dtype, batch, context, overlap, kernel_s, before=False):
    hidden, ffn, heads, kv = dims(model)
    weights = hidden * (heads + 2 * kv) * 128 + heads * 128 * hidden + 3 * hidden * ffn
    weight_s = weights * (1 if dtype == "fp8" else 2) / rate["bandwidth"]
    matmul_s = 2 * batch * weights / rate[dtype]
    kv_s = 2 * batch * kv * 128 * context * 2 / rate["bandwidth"]
    attention_s = 4 * batch * heads * 128 * context / rate["bf16"]

    def kernel(m, c):
        return max(m, c) + (1 - overlap) * min(m, c)

    if before:  # the model until session 23: every read overlapped with all the math
        return (max(weight_s + kv_s, matmul_s + attention_s) + KERNELS[dtype] * kernel_s) * 1e3

    return (kernel(weight_s, matmul_s) + kernel(kv_s, attention_s) +
            KERNELS[dtype] * kernel_s) * 1e3


def errors(gpu, overlap, kernel_s, before=False, suffix=""):
    rate = rates("nvidia-" + gpu)
    return [predict(rate, *row[:4], overlap, kernel_s, before) / row[4] - 1
            for row in measured(gpu, suffix)]


def summary(errs):
    return "median |error| {:.1f}%, max {:.1f}%, mean {:+.1f}% ({} steps)".format(
        100 * statistics.median(abs(e) for e in errs), 100 * max(abs(e) for e in errs),
        100 * statistics.mean(errs), len(errs))


def fit(gpu):
    grid = [(o / 20, k * 0.25e-6) for o in range(21) for k in range(41)]
    return min(grid, key=lambda g: statistics.median(abs(e) for e in errors(gpu, *g)))


def main():
    for gpu in ("h200", "h100"):
        print(f"{gpu}, before (max of all reads and all math, 3 us per kernel): "
              f"{summary(errors(gpu, 1.0, 3e-6, before=True))}")
    cal = calibration()
    shipped = (cal["matrix_memory_overlap"], cal["kernel_overhead_us"] * 1e-6)
    for gpu in ("h200", "h100"):
        print(f"{gpu}, as shipped (compiled-gpu.json: overlap {shipped[0]:.2f}, "
              f"{shipped[1] * 1e6:.1f} us per kernel): {summary(errors(gpu, *shipped))}")
    # One GPU's shard of a layer split 2 and 4 ways (smaller matmuls, fewer KV heads): never fitted.
    for suffix in ("_tp2", "_tp4"):
        print(f"h100{suffix} shards, before: {summary(errors('h100', 1.0, 3e-6, True, suffix))}")
        print(f"h100{suffix} shards, as shipped: {summary(errors('h100', *shipped, False, suffix))}")
    # Contexts of 8K-32K tokens at 1-32 sequences on the H200 (the fits saw 256 and 2,048).
    print(f"h200_long contexts, before: {summary(errors('h200', 1.0, 3e-6, True, '_long'))}")
    print(f"h200_long contexts, as shipped: {summary(errors('h200', *shipped, False, '_long'))}")
    for fitted, held_out in (("h200", "h100"), ("h100", "h200")):
        overlap, kernel_s = fit(fitted)
        print(f"fitted on {fitted}: overlap {overlap:.2f}, {kernel_s * 1e6:.2f} us per kernel")
        print(f"  {fitted} (in-sample): {summary(errors(fitted, overlap, kernel_s))}")
        print(f"  {held_out} (held out): {summary(errors(held_out, overlap, kernel_s))}")


if __name__ == "__main__":
    main()

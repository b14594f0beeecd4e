#!/usr/bin/env python3
"""How much of a GEMM's memory time hides behind its math on an H100, from measured GEMMs.

The eager calibration's matrix and memory efficiencies are the card's measured ceilings
(bench/data/h100_ceilings.json: a large bf16 matmul, a large copy). A kernel's time is
max(compute, memory) + (1 - overlap) x min(compute, memory) (Calibration::matrix_memory_overlap).
This script scores each overlap on the GEMMs of bench/data/h100_decode_sweep.csv (LLaMA-7B and
Llama-70B layer shapes, 1 to 8192 rows, bf16 and fp8 through PyTorch's cuBLAS calls, measured by
bench/device_decode_sweep.py) with those ceilings, and prints the median |error| per row range.

    python3 bench/gemm_overlap_fit.py
"""
import csv
import json
import os
import statistics

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OVERLAPS = (0.0, 0.25, 0.5, 0.65, 0.75, 1.0)
RANGES = ((1, 8192), (256, 8192), (1, 128))


def main():
    ceil = json.load(open(os.path.join(ROOT, "bench/data/h100_ceilings.json")))
    target = json.load(open(os.path.join(ROOT, "data/targets/nvidia-h100.json")))
    peak = {"bf16": target["peak_tflops"]["bf16"] * 1e12, "fp8": target["peak_tflops"]["fp8"] * 1e12}
    matrix_eff = ceil["bf16_matmul_tflops"] / target["peak_tflops"]["bf16"]
    memory_eff = ceil["copy_gbps_read_plus_write"] / target["hbm_gbps"]
    share = {"bf16": 1.0, "fp8": target.get("fp8_matmul_share", 1.0)}
    with open(os.path.join(ROOT, "bench/data/h100_decode_sweep.csv")) as f:
        rows = [r for r in csv.DictReader(line for line in f if not line.startswith('"#'))
                if r["kind"].startswith("gemm")]

    def median_error(overlap, dtype, lo, hi):
        errors = []
        for r in rows:
            if r["dtype"] != dtype or not lo <= int(r["m"]) <= hi:
                continue
            compute = float(r["flops"]) / (peak[dtype] * matrix_eff * share[dtype])
            memory = float(r["bytes"]) / (target["hbm_gbps"] * 1e9 * memory_eff)
            predicted = max(compute, memory) + (1 - overlap) * min(compute, memory)
            measured = float(r["ms"]) / 1e3
            errors.append(abs(predicted - measured) / measured)
        return statistics.median(errors), len(errors)

    print(f"ceilings: matmul {matrix_eff:.3f} of the bf16 peak, copy {memory_eff:.3f} of the bandwidth")
    for dtype in ("bf16", "fp8"):
        for lo, hi in RANGES:
            scores = [(o, *median_error(o, dtype, lo, hi)) for o in OVERLAPS]
            best = min(scores, key=lambda s: s[1])
            cells = "  ".join(f"{o:.2f}: {e * 100:4.1f}%" for o, e, _ in scores)
            print(f"{dtype:4} rows {lo:>4}-{hi:<4} ({scores[0][2]:3} GEMMs)  {cells}   best {best[0]:.2f}")


if __name__ == "__main__":
    main()

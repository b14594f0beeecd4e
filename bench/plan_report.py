#!/usr/bin/env python3
"""The plans issue 13 asks for, in one table: ResNet-50, BERT-base, Llama 3.1 8B and 70B (seq 8192)
on v5e, v5p and v6e — the best configuration per generation, whether it fits, whether it shards —
and, for the Llama 3.1 runs MaxText published, the plan's own throughput on the published slice
beside the published figure.

    python3 bench/plan_report.py [--binary build/tpu-doctor]
"""
import argparse
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = [
    ("ResNet-50", "examples/resnet50.onnx", []),
    ("BERT-base", "examples/configs/bert-base-uncased.json", ["--seq", "512"]),
    ("Llama 3.1 8B", "examples/configs/llama-3.1-8b.json", ["--seq", "8192"]),
    ("Llama 3.1 70B", "examples/configs/llama-3.1-70b.json", ["--seq", "8192"]),
]
# (model, published slice chips, published tokens/s/chip, precision the recipe used)
PUBLISHED = [
    ("Llama 3.1 8B", "examples/configs/llama-3.1-8b.json", 8, 7138.9, "bf16"),
    ("Llama 3.1 8B", "examples/configs/llama-3.1-8b.json", 256, 7207.3, "bf16"),
    ("Llama 3.1 70B", "examples/configs/llama-3.1-70b.json", 32, 921.0, "bf16-params"),
    ("Llama 3.1 70B", "examples/configs/llama-3.1-70b.json", 256, 960.2, "bf16"),
]


def plan(binary, model, extra):
    out = subprocess.run([binary, "plan", os.path.join(ROOT, model), "--format", "json", *extra],
                         capture_output=True, text=True)
    return json.loads(out.stdout)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tpu-doctor"))
    binary = ap.parse_args().binary
    print(f"{'model':<14} {'slice':<14} {'parallelism':<16} {'remat':<8} {'batch/dev':>9} "
          f"{'global':>7} {'memory/chip':>12} {'of HBM':>7} {'throughput':>20} {'$/1M':>9}")
    for name, model, extra in MODELS:
        p = plan(binary, model, extra)
        for c in p["best_per_generation"]:
            par = ",".join(f"{k}={v}" for k, v in c["parallel"].items() if v > 1) or "data=1"
            tput = (f"{c['tokens_per_s_per_chip']:.0f} tok/s/chip" if c["tokens_per_s_per_chip"]
                    else f"{c['samples_per_s']:.0f} samples/s")
            per_m = c["usd_per_million_tokens"] or c["usd_per_million_samples"]
            print(f"{name:<14} {c['accelerator_type']:<14} {par:<16} {c['remat']:<8} "
                  f"{c['per_device_batch']:>9.2f} {c['global_batch']:>7} "
                  f"{c['memory_per_chip_bytes'] / 2**30:>10.1f}Gi {c['hbm_bytes'] / 2**30:>5.0f}Gi "
                  f"{tput:>20} {per_m:>9.4f}")
        for u in p["unfit"]:
            print(f"{name:<14} {u}")
    print("\nthe plan on the published slice (v6e, --objective throughput) beside MaxText's figure")
    for name, model, chips, published, precision in PUBLISHED:
        p = plan(binary, model, ["--seq", "8192", "--targets", "tpu-v6e", "--max-chips", str(chips),
                                 "--objective", "throughput", "--precision", precision])
        c = p["choice"]
        got = c["tokens_per_s_per_chip"]
        print(f"{name:<14} v6e-{chips:<4} plan {c['accelerator_type']} "
              f"{','.join(f'{k}={v}' for k, v in c['parallel'].items() if v > 1)} remat {c['remat']}"
              f": {got:.0f} tok/s/chip, published {published:.0f} ({got / published - 1:+.0%})")


if __name__ == "__main__":
    main()

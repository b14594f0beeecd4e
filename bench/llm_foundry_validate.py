#!/usr/bin/env python3
"""MosaicML's MPT training benchmarks beside tpu-doctor's prediction, row by row.

bench/data/llm_foundry_results.csv holds every row of the five tables in llm-foundry's
scripts/train/benchmarking/README.md (its commit in each row's `source`): MPT models of 125M to
70B parameters trained with Composer's PyTorch FSDP on 8 to 512 A100 40GB, A100 80GB and H100
GPUs, at 512 to 65,536 tokens, each with the micro-batch, gradient accumulation, sharding and
activation checkpointing it ran. Each row is predicted the way the benchmark ran it:

- the model: the MPT-{size} config of llm-foundry's scripts/train/yamls/pretrain, with
  `max_seq_len` set to the row's sequence length as submit_benchmarks.py sets it (so the learned
  position table has that many rows) and its default biases (the 125m row's `NumParams` is
  matched to the unit by ModelConfigTest.MptCountsItsBiasesAndPositionTableAsTheConfigSays);
- `--parallel fsdp=N` for FULL_SHARD; `--distributed-optimizer` over N data replicas for
  SHARD_GRAD_OP (ZeRO-2: the weights whole, the fp32 state sharded, gradients reduce-scattered);
- `--remat layer` where activation checkpointing is on (Composer wraps each MPT block);
- amp_bf16 and bf16 (FSDP's PURE mode) as `--precision bf16`, amp_fp8 (Transformer Engine) as fp8;
- the eager runtime and FlashAttention (1)'s kernels: the benchmark's default `attn_impl` is
  `triton` (llm-foundry's Triton port of FlashAttention) and its `gpu` extra pins flash-attn
  1.0.9, at both commits that wrote the tables (b2a43a147, 5e85bd62d; setup.py and
  submit_benchmarks.py). `--attention-kernel flash-attention-1` on the A100s; the H100 has no
  published FlashAttention (1) rate, so its rows take FlashAttention-2's Hopper rate, the nearest
  kernel with one (`--attention-kernel default` runs every row at the runtime's calibration
  instead, as the first look did).

    python3 bench/llm_foundry_validate.py [--binary build/tpu-doctor] [--table A100]

Prints each row, then per table and overall: the median absolute error, how many rows are within
25%, and how many runs that ran were called "does not fit". Nothing is fitted to these rows.
"""
import argparse
import csv
import json
import os
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from published_validate import ROOT, run_estimate  # noqa: E402

CSV = os.path.join(ROOT, "bench", "data", "llm_foundry_results.csv")

# llm-foundry's scripts/train/yamls/pretrain/mpt-{size}.yaml: d_model, n_heads, n_layers (the
# benchmark sizes' heads were changed so that a head is 128 wide, as FlashAttention needed).
MPT_SIZES = {"125m": (768, 12, 12), "350m": (1024, 16, 24), "760m": (1536, 12, 24),
             "1b": (2048, 16, 24), "3b": (2560, 20, 32), "7b": (4096, 32, 32),
             "13b": (5120, 40, 40), "30b": (7168, 56, 48), "70b": (8192, 64, 80)}
TARGETS = {"a100_40gb": "nvidia-a100", "a100_80gb": "nvidia-a100-80gb", "h100_80gb": "nvidia-h100"}
PRECISIONS = {"amp_bf16": "bf16", "bf16": "bf16", "amp_fp8": "fp8"}
ATTENTION_KERNELS = {"a100_40gb": "flash-attention-1", "a100_80gb": "flash-attention-1",
                     "h100_80gb": "flash-attention-2"}


def mpt_config(size, seq):
    d_model, n_heads, n_layers = MPT_SIZES[size]
    return {"model_type": "mpt", "d_model": d_model, "n_heads": n_heads, "n_layers": n_layers,
            "expansion_ratio": 4, "max_seq_len": seq, "vocab_size": 50368,
            "attn_config": {"attn_impl": "flash"}}


def estimate_command(binary, config_path, row, attention_kernel):
    gpus = int(row["gpus"])
    cmd = [binary, "estimate", config_path, "--train", "--format", "json",
           "--targets", f"{TARGETS[row['gpu']]}-{gpus}", "--seq", row["seq"],
           "--batch", row["micro_batch"], "--micro-batches", row["grad_accum"],
           "--precision", PRECISIONS[row["precision"]],
           "--remat", "layer" if row["activation_checkpointing"] == "True" else "none"]
    if attention_kernel != "default":
        cmd += ["--attention-kernel", attention_kernel or ATTENTION_KERNELS[row["gpu"]]]
    if row["sharding"] == "FULL_SHARD":
        return cmd + ["--parallel", f"fsdp={gpus}"]
    if row["sharding"] == "SHARD_GRAD_OP":
        return cmd + ["--parallel", f"data={gpus}", "--distributed-optimizer"]
    raise ValueError(f"unknown sharding {row['sharding']}")


def predict(binary, workdir, row, attention_kernel):
    """tokens/s per GPU and whether it fits."""
    seq = int(row["seq"])
    path = os.path.join(workdir, f"mpt-{row['model']}-{seq}.json")
    with open(path, "w") as f:
        json.dump(mpt_config(row["model"], seq), f)
    e = run_estimate(estimate_command(binary, path, row, attention_kernel))
    tokens_per_gpu = e["global_batch"] * seq / (e["step_time_ms"] / 1e3) / int(row["gpus"])
    return tokens_per_gpu, e["fits"]


def summary(name, errors, not_fitting):
    return (f"{name}: {len(errors)} rows, median absolute error {statistics.median(errors):.1%}, "
            f"within 25%: {sum(e <= 0.25 for e in errors)}/{len(errors)}, called 'does not fit': "
            f"{not_fitting}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=CSV)
    ap.add_argument("--table", default="", help="only the tables whose title contains this")
    ap.add_argument("--attention-kernel", default="",
                    help="run every row with this kernel (`default`: the runtime's calibration); "
                         "unset: FlashAttention (1) on the A100s, FlashAttention-2 on the H100")
    args = ap.parse_args()
    rows = [r for r in csv.DictReader(open(args.csv)) if args.table in r["table"]]
    if not rows:
        sys.exit("no rows")
    by_table = {}
    print(f"{'model':<5} {'seq':>6} {'GPUs':>4} {'GPU':<9} {'mb x acc':>8} {'ckpt':<5} "
          f"{'published':>10} {'predicted':>10}  error")
    with tempfile.TemporaryDirectory() as workdir:
        for row in rows:
            predicted, fits = predict(args.binary, workdir, row, args.attention_kernel)
            published = float(row["tokens_per_s_per_gpu"])
            err = predicted / published - 1
            errors, not_fitting = by_table.setdefault(row["table"], ([], [0]))
            errors.append(abs(err))
            not_fitting[0] += not fits
            print(f"{row['model']:<5} {row['seq']:>6} {row['gpus']:>4} {row['gpu']:<9} "
                  f"{row['micro_batch'] + ' x ' + row['grad_accum']:>8} "
                  f"{row['activation_checkpointing']:<5} {published:>10.0f} {predicted:>10.0f} "
                  f"{err:+6.0%}" + ("" if fits else "  (called 'does not fit')"))
    print()
    for table, (errors, not_fitting) in by_table.items():
        print(summary(table, errors, not_fitting[0]))
    all_errors = [e for errors, _ in by_table.values() for e in errors]
    print(summary("all", all_errors, sum(n[0] for _, n in by_table.values())))


if __name__ == "__main__":
    main()

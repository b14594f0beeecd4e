#!/usr/bin/env python3
"""Ground truth for the serving model's decode step, measured on one Hopper GPU.

Run on a machine with an NVIDIA H100/H200 and PyTorch (not in CI):

    python3 bench/device_decode_sweep.py --out bench/data/h200_decode_sweep.csv

It times the pieces a decode step of a dense decoder is made of, each alone, so that the cost
model's terms can be checked one by one rather than fitted to engines' end-to-end tables:

- `copy`: a device-to-device copy (the bandwidth ceiling);
- `gemm`: the weight matmuls of one layer of LLaMA-7B and Llama-70B (whole, and each shard of a
  tensor-parallel split over 2 and 4 GPUs) at M = tokens in the step, from 1 to 8192, in bf16
  and in fp8 (e4m3 weights and activations, per-tensor scales, bf16 out: what fp8 serving runs);
- `attn`: the attention of one decode token per sequence over a KV cache (bf16), as PyTorch's
  fused scaled-dot-product kernel runs it, with the query heads of a KV group expanded (MHA) and
  served from one load (GQA).

Each row: kind, dtype, shape, M, median milliseconds over the timed repeats, bytes and FLOPs the
op must move and do, and the achieved rates.
"""
import argparse
import csv
import statistics

import torch

LAYERS = {
    # name: hidden, ffn, query heads, kv heads (head_dim 128)
    "llama-7b": (4096, 11008, 32, 32),
    "llama-70b": (8192, 28672, 64, 8),
}
MS = [1, 8, 16, 32, 64, 96, 128, 192, 256, 384, 512, 768, 1024, 1536, 2048, 4096, 8192]


def timed(fn, repeats=20, warmup=3):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeats):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end))
    return statistics.median(times)


def layer_gemms(hidden, ffn, heads, kv_heads, tp):
    """(name, K, N) of one layer's weight matmuls on one of `tp` shards (Megatron split)."""
    qkv = (heads + 2 * kv_heads) * 128
    return [
        ("qkv", hidden, qkv // tp),
        ("o", hidden // tp, hidden),
        ("gate_up", hidden, 2 * ffn // tp),
        ("down", ffn // tp, hidden),
    ]


def gemm_rows(writer, dev):
    fp8 = getattr(torch, "float8_e4m3fn", None)
    one = torch.ones((), device=dev, dtype=torch.float32)
    for model, (hidden, ffn, heads, kv) in LAYERS.items():
        for tp in (1, 2, 4):
            for name, k, n in layer_gemms(hidden, ffn, heads, kv, tp):
                w16 = torch.randn(n, k, device=dev, dtype=torch.bfloat16)
                w8 = w16.to(fp8) if fp8 else None
                for m in MS:
                    x16 = torch.randn(m, k, device=dev, dtype=torch.bfloat16)
                    runs = [("bf16", 2, lambda: x16 @ w16.t())]
                    if w8 is not None and m % 16 == 0:
                        x8 = x16.to(fp8)
                        runs.append(("fp8", 1, lambda: torch._scaled_mm(
                            x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16)))
                    for dtype, size, fn in runs:
                        try:
                            ms = timed(fn)
                        except RuntimeError as err:  # an fp8 shape the library refuses
                            print(f"skip {model} {name} tp{tp} m{m} {dtype}: {err}".splitlines()[0])
                            continue
                        flops = 2.0 * m * k * n
                        moved = size * (m * k + k * n) + 2 * m * n
                        writer.writerow([f"gemm:{model}:tp{tp}:{name}", dtype, f"{k}x{n}", m,
                                         f"{ms:.5f}", int(moved), int(flops),
                                         f"{moved / ms / 1e9:.1f}", f"{flops / ms / 1e9:.1f}"])
                del w16, w8
                torch.cuda.empty_cache()


def attention_rows(writer, dev):
    sdpa = torch.nn.functional.scaled_dot_product_attention
    for model, (hidden, _, heads, kv) in LAYERS.items():
        for batch in (16, 64, 192):
            for context in (256, 1024, 2048, 4096):
                cache_bytes = 2 * batch * kv * context * 128 * 2
                if cache_bytes > 24e9:
                    continue
                q = torch.randn(batch, heads, 1, 128, device=dev, dtype=torch.bfloat16)
                k = torch.randn(batch, kv, context, 128, device=dev, dtype=torch.bfloat16)
                v = torch.randn_like(k)
                group = heads // kv
                variants = [("gqa", lambda: sdpa(q, k, v, enable_gqa=True))]
                if group > 1:
                    variants.append(("expanded", lambda: sdpa(
                        q, k.repeat_interleave(group, 1), v.repeat_interleave(group, 1))))
                    # The query heads of a group as rows against their KV head: one load.
                    qg = q.view(batch, kv, group, 128)
                    variants.append(("grouped", lambda: sdpa(qg, k, v)))
                for variant, fn in variants:
                    try:
                        ms = timed(fn, repeats=10)
                    except (RuntimeError, TypeError) as err:
                        print(f"skip attn {model} {variant}: {err}".splitlines()[0])
                        continue
                    flops = 4.0 * batch * heads * context * 128
                    writer.writerow([f"attn:{model}:{variant}:b{batch}", "bf16", f"ctx{context}",
                                     batch, f"{ms:.5f}", int(cache_bytes), int(flops),
                                     f"{cache_bytes / ms / 1e9:.1f}", f"{flops / ms / 1e9:.1f}"])
                del q, k, v
                torch.cuda.empty_cache()


def copy_rows(writer, dev):
    a = torch.empty(2 * 1024**3, device=dev, dtype=torch.uint8)
    b = torch.empty_like(a)
    ms = timed(lambda: b.copy_(a))
    moved = 2 * a.numel()
    writer.writerow(["copy", "u8", "2GiB", 0, f"{ms:.5f}", moved, 0,
                     f"{moved / ms / 1e9:.1f}", "0"])


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    dev = torch.device("cuda")
    torch.backends.cuda.matmul.allow_tf32 = False
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["# " + torch.cuda.get_device_name(0) + ", torch " + torch.__version__])
        writer.writerow(["kind", "dtype", "shape", "m", "ms", "bytes", "flops", "tb_per_s",
                         "tflop_per_s"])
        copy_rows(writer, dev)
        f.flush()
        gemm_rows(writer, dev)
        f.flush()
        attention_rows(writer, dev)


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Ground truth for a whole decode step, and for a prefill, measured on one Hopper GPU (not in CI).

    python3 -P bench/device_decode_layers.py --out bench/data/h200_decode_layers.csv
    python3 -P bench/device_decode_layers.py --prefill --out bench/data/h100_prefill_layers.csv
    python3 -P bench/device_decode_layers.py --tp 2 --out bench/data/h100_decode_layers_tp2.csv
    python3 -P bench/device_decode_layers.py --long --out bench/data/h200_decode_layers_long.csv

A decoder layer's decode step as a serving engine without custom kernels runs it: RMSNorm, the
QKV matmul, the new token's K and V written into the cache, PyTorch's fused attention over the
cache (grouped-query heads served from one KV load), the output matmul and residual, RMSNorm, the
gate/up matmul, SiLU and product, the down matmul and residual. Eight layers with their own
weights and caches (more than the L2 holds) are captured in one CUDA graph and replayed, as
vLLM and TensorRT-LLM replay their decode steps, so no launch gap from Python is counted.
The matmuls run in bf16, or in fp8 (e4m3 weights and activations, per-tensor scales).

Each row: model, dtype, sequences in flight (M), context, milliseconds per layer (median of the
replays), and the bytes each layer must read (weights and the KV cache).

With --long: contexts of 8K-32K tokens at 1-32 sequences (what a long prompt leaves in the cache),
which no fit uses.

With --prefill: the same layer over whole prompts instead (`batch` prompts of `context` tokens:
causal attention over the prompt, the K and V written to the cache), as an engine's context phase
runs them.
"""
import argparse
import csv
import statistics

import torch

LAYERS = {  # name: hidden, ffn, query heads, kv heads (head_dim 128)
    "llama-7b": (4096, 11008, 32, 32),
    "llama-70b": (8192, 28672, 64, 8),
}
DEPTH = 8


def rms(x, w):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-6).to(x.dtype) * w


class Layer:
    def __init__(self, dims, batch, context, fp8, dev):
        hidden, ffn, heads, kv = dims
        self.dims = dims
        self.fp8 = fp8
        bf = torch.bfloat16

        def weight(n, k):
            w = torch.randn(n, k, device=dev, dtype=bf) * 0.02
            return w.to(torch.float8_e4m3fn) if fp8 else w

        self.w = [weight((heads + 2 * kv) * 128, hidden), weight(hidden, heads * 128),
                  weight(2 * ffn, hidden), weight(hidden, ffn)]
        self.norm = torch.ones(hidden, device=dev, dtype=bf)
        self.k = torch.randn(batch, kv, context, 128, device=dev, dtype=bf)
        self.v = torch.randn_like(self.k)
        self.one = torch.ones((), device=dev, dtype=torch.float32)

    def mm(self, x, i):
        if not self.fp8:
            return x @ self.w[i].t()
        return torch._scaled_mm(x.to(torch.float8_e4m3fn), self.w[i].t(), scale_a=self.one,
                                scale_b=self.one, out_dtype=torch.bfloat16)

    def prefill(self, x, batch):
        """x: [batch x prompt, hidden]; the prompt is the cache's length."""
        hidden, ffn, heads, kv = self.dims
        prompt = x.shape[0] // batch
        qkv = self.mm(rms(x, self.norm), 0)
        q, k, v = qkv.split([heads * 128, kv * 128, kv * 128], dim=-1)
        q = q.view(batch, prompt, heads, 128).transpose(1, 2)
        self.k.copy_(k.view(batch, prompt, kv, 128).transpose(1, 2))
        self.v.copy_(v.view(batch, prompt, kv, 128).transpose(1, 2))
        a = torch.nn.functional.scaled_dot_product_attention(
            q, self.k, self.v, is_causal=True, enable_gqa=True)
        x = x + self.mm(a.transpose(1, 2).reshape(batch * prompt, heads * 128), 1)
        gu = self.mm(rms(x, self.norm), 2)
        g, u = gu.split([ffn, ffn], dim=-1)
        return x + self.mm(torch.nn.functional.silu(g) * u, 3)

    def __call__(self, x):
        hidden, ffn, heads, kv = self.dims
        m = x.shape[0]
        qkv = self.mm(rms(x, self.norm), 0)
        q, k, v = qkv.split([heads * 128, kv * 128, kv * 128], dim=-1)
        self.k[:, :, -1, :] = k.view(m, kv, 128)
        self.v[:, :, -1, :] = v.view(m, kv, 128)
        a = torch.nn.functional.scaled_dot_product_attention(
            q.view(m, heads, 1, 128), self.k, self.v, enable_gqa=True)
        x = x + self.mm(a.reshape(m, heads * 128), 1)
        gu = self.mm(rms(x, self.norm), 2)
        g, u = gu.split([ffn, ffn], dim=-1)
        return x + self.mm(torch.nn.functional.silu(g) * u, 3)

    def bytes(self):
        return sum(w.numel() * w.element_size() for w in self.w) + 2 * self.k.numel() * 2


def measure(dims, batch, context, fp8, dev, prefill=False):
    layers = [Layer(dims, batch, context, fp8, dev) for _ in range(DEPTH)]
    rows = batch * context if prefill else batch
    x = torch.randn(rows, dims[0], device=dev, dtype=torch.bfloat16) * 0.1

    def step():
        y = x
        for layer in layers:
            y = layer.prefill(y, batch) if prefill else layer(y)
        return y

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(2):
            step()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        step()
    times = []
    for _ in range(12):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        start.record()
        graph.replay()
        end.record()
        end.synchronize()
        times.append(start.elapsed_time(end) / DEPTH)
    moved = layers[0].bytes()
    del graph, layers
    torch.cuda.empty_cache()
    return statistics.median(times[2:]), moved


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--prefill", action="store_true")
    parser.add_argument("--long", action="store_true")
    parser.add_argument("--tp", type=int, default=1,
                        help="time one GPU's shard of a layer split N ways (Megatron: heads, KV "
                             "heads and the MLP's width divided), without the all-reduces")
    args = parser.parse_args()
    # (batch, context): decode steps of many sequences, or the prompts of a prefill.
    if args.prefill:
        shapes = [(1, 128), (1, 2048), (8, 128), (8, 2048), (64, 128), (16, 2048), (64, 512)]
    elif args.long:
        shapes = [(b, c) for b in (1, 8, 32) for c in (8192, 16384, 32768)]
    else:
        shapes = [(b, c) for b in (16, 64, 192, 512) for c in (256, 2048)]
    dev = torch.device("cuda")
    with open(args.out, "w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(["# " + torch.cuda.get_device_name(0) + ", torch " + torch.__version__ +
                         f", {DEPTH} layers in one CUDA graph" +
                         (", prefill" if args.prefill else ", decode")])
        writer.writerow(["model", "matmul_dtype", "batch", "context", "ms_per_layer",
                         "bytes_per_layer", "tb_per_s"])
        for name, (hidden, ffn, heads, kv) in LAYERS.items():
            dims = (hidden, ffn // args.tp, heads // args.tp, max(1, kv // args.tp))
            model = name if args.tp == 1 else f"{name}/tp{args.tp}"
            for fp8 in (False, True):
                for batch, context in shapes:
                    cache = DEPTH * 2 * batch * dims[3] * context * 128 * 2
                    if cache > 64e9:
                        continue
                    try:
                        ms, moved = measure(dims, batch, context, fp8, dev, args.prefill)
                    except RuntimeError as err:
                        print(f"skip {model} fp8={fp8} b{batch} c{context}: "
                              f"{str(err).splitlines()[0]}")
                        torch.cuda.empty_cache()
                        continue
                    writer.writerow([model, "fp8" if fp8 else "bf16", batch, context,
                                     f"{ms:.5f}", moved, f"{moved / ms / 1e9:.2f}"])
                    f.flush()


if __name__ == "__main__":
    main()

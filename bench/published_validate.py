#!/usr/bin/env python3
"""Published training throughput beside tpu-doctor's prediction, row by row.

Every row of ../shared/knowledge/published_results.csv (copied as bench/data/published_results.csv)
that describes a model tpu-doctor can build is predicted with `tpu-doctor estimate` in the set-up
the publication used (slice, global batch, sequence length, precision, and for MaxText runs FSDP
over the slice with the layer inputs offloaded, as the tpu-recipes configure them), and printed
beside the published figure with the error. Rows tpu-doctor cannot predict (PaLM, MLPerf
time-to-train, rows without a throughput) are listed as skipped with the reason.

    python3 bench/published_validate.py [--binary build/tpu-doctor]

The median absolute error is printed last. Nothing here is fitted to these rows: the efficiency
factors come from data/calibration/*.json.
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CONFIGS = os.path.join(ROOT, "examples", "configs")
RESNET = os.path.join(ROOT, "examples", "resnet50.onnx")

# (model, hardware as published, throughput) → how to predict it. `per` is the unit: tokens/s per
# chip, samples/s in total, or TFLOP/s per chip. `grouped`: a dropless MoE whose experts run as
# grouped matmuls (bench/moe_calibration_fit.py fits their efficiency to the bf16 ones). `batch` is the per-device batch the run used (a
# device is a TensorCore on v2/v3 and a chiplet on TPU7x: two per chip).
# The workloads of tpu-recipes' vLLM benchmarks on Ironwood: name, tokens in, tokens out.
IRONWOOD_WORKLOADS = [("1k in / 1k out", 1024, 1024), ("1k in / 8k out", 1024, 8192),
                      ("8k in / 1k out", 8192, 1024)]

# TensorRT-LLM's perf-overview workloads (ISL, OSL) and the requests each run's dataset holds
# (its "Preparing a Dataset" table, $num_requests): trtllm-bench queues them all at once and
# reports the job's output tokens over its time (`--requests`).
TRTLLM_REQUESTS = {(128, 128): 30000, (128, 2048): 3000, (128, 4096): 1500, (500, 2000): 3000,
                   (1000, 1000): 3000, (1000, 2000): 1500, (2048, 128): 3000, (2048, 2048): 1500,
                   (5000, 500): 1500, (20000, 2000): 1000}
TRTLLM_WORKLOADS = list(TRTLLM_REQUESTS)

# jetstream-pytorch's v5e-8 table (benchmarks/summary.md; session 30, held out): JetStream's
# benchmark_serving over ShareGPT, the server's `batch` slots full. The engine keeps a static
# cache of `cache` tokens a slot and attends over all of it each step (its AttentionKernel scores
# the whole cache, masked), prefills one prompt at a time padded to JetStream's power-of-two
# buckets, and with --shard_on_batch (Gemma 2B) splits the decode batch over the chips and runs
# each prefill replicated on all of them. ShareGPT as JetStream filters it averages about 230
# tokens in and 200 out (vLLM's benchmark over the same file, Llama 3 tokenizer: 229,711 and
# 203,068 tokens over 1,000 requests; vllm-project/vllm#18566). int8: the weights and the cache;
# the weights alone (jetstream_pt/layers.py's WeightOnlyPerChannelQuantizedLinear: F.linear of the
# bf16 input and the int8 weight unless quantize_activation is set, which defaults off), so
# `--precision int8w` since session 33 (`int8`, AQT's int8 x int8 matmuls, before).
JETSTREAM_PT = [("Llama3-8B", "llama-3.1-8b.json", "bf16", 128, 2048),
                ("Llama3-8B", "llama-3.1-8b.json", "int8", 256, 2048),
                ("Gemma-7B", "gemma-7b.json", "bf16", 96, 2048),
                ("Gemma-7B", "gemma-7b.json", "int8", 128, 2048),
                ("Gemma-2B", "gemma-2b.json", "bf16", 512, 2048),
                ("Gemma-2B", "gemma-2b.json", "int8", 1024, 2048),
                ("Llama2-7B", "llama-2-7b.json", "bf16", 96, 2048),
                ("Llama2-7B", "llama-2-7b.json", "int8", 96, 2048),
                ("Llama2-13B", "llama-2-13b.json", "bf16", 48, 2048),
                ("Llama2-13B", "llama-2-13b.json", "int8", 96, 2048),
                ("Llama2-13B", "llama-2-13b.json", "bf16", 80, 1280),
                ("Llama2-13B", "llama-2-13b.json", "int8", 96, 1280)]


def jetstream_pt_spec(name, model, dtype, batch, cache):
    spec = dict(match=(f"{name} (jetstream-pytorch)", f"batch {batch}, cache length {cache}",
                       f"{dtype} weights"), model=model, target="tpu-v5e-8",
                serve=(230, 200, batch), chips=8, per="serve",
                precision="int8w" if dtype == "int8" else dtype,
                kv_cache_length=cache, bucketed_prefill=True, held_out=True)
    if dtype == "int8":
        spec["kv_cache_dtype"] = "int8"
    if name == "Gemma-2B":
        spec.update(parallel="data=8", replicated_prefill=True)
    return spec


# TensorRT-LLM v0.6.1's peak-throughput tables (its docs/source/performance.md): static batching,
# one engine of `tp` GPUs, out tok/s per GPU. The H100 engines of its benchmarking recipe are built
# with --enable_fp8 --fp8_kv_cache; on the A100 the same recipe without them (fp16 GEMMs and KV
# cache). The A100 table is headed "out tok/s" where the H100 one says per GPU; it is read per GPU
# as well (at the total reading its TP=4 and TP=8 rows would run at 3-15% of the A100's fp16 peak,
# where the TP=1 rows of the same table run at 40-60%). The GPT-J, Falcon and A100 rows were added
# in session 31 and predicted once before anything changed (held out). Name, config, GPU, tp,
# batch, tokens in, tokens out.
TRTLLM_061 = [
    ("LLaMA 7B", "llama-2-7b.json", "H100", 1, 768, 128, 128),
    ("LLaMA 7B", "llama-2-7b.json", "H100", 1, 112, 128, 2048),
    ("LLaMA 7B", "llama-2-7b.json", "H100", 1, 80, 2048, 128),
    ("LLaMA 7B", "llama-2-7b.json", "H100", 1, 48, 2048, 2048),
    ("LLaMA 70B", "llama-2-70b.json", "H100", 2, 1024, 128, 128),
    ("LLaMA 70B", "llama-2-70b.json", "H100", 4, 480, 128, 2048),
    ("LLaMA 70B", "llama-2-70b.json", "H100", 2, 96, 2048, 128),
    ("LLaMA 70B", "llama-2-70b.json", "H100", 2, 64, 2048, 2048),
    ("GPT-J 6B", "gpt-j-6b.json", "H100", 1, 1024, 128, 128),
    ("GPT-J 6B", "gpt-j-6b.json", "H100", 1, 120, 128, 2048),
    ("GPT-J 6B", "gpt-j-6b.json", "H100", 1, 64, 2048, 128),
    ("GPT-J 6B", "gpt-j-6b.json", "H100", 1, 64, 2048, 2048),
    ("Falcon 180B", "falcon-180b.json", "H100", 4, 1024, 128, 128),
    ("Falcon 180B", "falcon-180b.json", "H100", 8, 1024, 128, 2048),
    ("Falcon 180B", "falcon-180b.json", "H100", 4, 64, 2048, 128),
    ("Falcon 180B", "falcon-180b.json", "H100", 4, 64, 2048, 2048),
    ("GPT-J 6B", "gpt-j-6b.json", "A100", 1, 512, 128, 128),
    ("GPT-J 6B", "gpt-j-6b.json", "A100", 2, 120, 128, 2048),
    ("GPT-J 6B", "gpt-j-6b.json", "A100", 1, 60, 2048, 128),
    ("GPT-J 6B", "gpt-j-6b.json", "A100", 2, 64, 2048, 2048),
    ("LLaMA 7B", "llama-2-7b.json", "A100", 1, 384, 128, 128),
    ("LLaMA 7B", "llama-2-7b.json", "A100", 1, 60, 128, 2048),
    ("LLaMA 7B", "llama-2-7b.json", "A100", 1, 52, 2048, 128),
    ("LLaMA 7B", "llama-2-7b.json", "A100", 2, 64, 2048, 2048),
    ("LLaMA 70B", "llama-2-70b.json", "A100", 4, 1280, 128, 128),
    ("LLaMA 70B", "llama-2-70b.json", "A100", 4, 240, 128, 2048),
    ("LLaMA 70B", "llama-2-70b.json", "A100", 4, 120, 2048, 128),
    ("Falcon 180B", "falcon-180b.json", "A100", 8, 1024, 128, 128),
    ("Falcon 180B", "falcon-180b.json", "A100", 8, 128, 128, 2048)]


def trtllm_061_spec(name, model, gpu, tp, batch, prompt, output):
    """TensorRT-LLM before 0.7 decoded grouped-query models with its masked multi-head attention
    kernel (one thread block per sequence and query head; XQA, which reads each key/value head
    once, came in 0.7): `kv_reads_per_query_head`."""
    target = {"H100": "nvidia-h100", "A100": "nvidia-a100-80gb"}[gpu]
    precision = "fp8" if gpu == "H100" else "fp16"
    spec = dict(match=(f"{name} (TensorRT-LLM v0.6.1)", f"{prompt} in / {output} out",
                       f"batch {batch}, TP={tp};", f"{tp}x {gpu}"), model=model,
                target=target + (f"-{tp}" if tp > 1 else ""), serve=(prompt, output, batch),
                chips=tp, per="serve_per_chip", precision=precision, kv_reads_per_query_head=True)
    if gpu == "H100":
        spec["kv_cache_dtype"] = "fp8"
    return spec


ROWS = [
    # MaxText on Trillium (tpu-recipes): FSDP over the slice, decoder layer inputs offloaded.
    dict(match=("Llama3.1-8B", "v6e-8)"), model="llama-3.1-8b.json", target="tpu-v6e-8", seq=8192,
         batch=3, chips=8, parallel="fsdp=8", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-8B", "v6e-256)"), model="llama-3.1-8b.json", target="tpu-v6e-256",
         seq=8192, batch=4, chips=256, parallel="fsdp=256", remat="offload", per="tokens/chip"),
    # The v6e-32 recipe sets weight_dtype=bfloat16 (maxtext_trillium_model_configs.py).
    dict(match=("Llama3.1-70B", "v6e-32)"), model="llama-3.1-70b.json", target="tpu-v6e-32",
         seq=8192, batch=2, chips=32, parallel="fsdp=32", remat="offload", per="tokens/chip",
         precision="bf16-params"),
    dict(match=("Llama3.1-70B", "v6e-256)"), model="llama-3.1-70b.json", target="tpu-v6e-256",
         seq=8192, batch=5, chips=256, parallel="fsdp=256", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-405B", "2x v6e-256"), model="llama-3.1-405b.json", target="tpu-v6e-256",
         seq=8192, batch=1, chips=512, slices=2, dcn="fsdp", parallel="fsdp=256", remat="offload",
         per="tokens/chip"),
    dict(match=("Llama3.1-405B", "TPU v5p"), model="llama-3.1-405b.json", target="tpu-v5p-1024",
         seq=8192, batch=2, chips=512, parallel="fsdp=512", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-8B", "v6e-16)"), model="llama-3.1-8b.json", target="tpu-v6e-16",
         seq=8192, batch=3, chips=16, parallel="fsdp=16", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-8B", "v6e-32)"), model="llama-3.1-8b.json", target="tpu-v6e-32",
         seq=8192, batch=3, chips=32, parallel="fsdp=32", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-8B", "v6e-64)"), model="llama-3.1-8b.json", target="tpu-v6e-64",
         seq=8192, batch=5, chips=64, parallel="fsdp=64", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-8B", "v6e-128)"), model="llama-3.1-8b.json", target="tpu-v6e-128",
         seq=8192, batch=4, chips=128, parallel="fsdp=128", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-70B", "v6e-64)"), model="llama-3.1-70b.json", target="tpu-v6e-64",
         seq=8192, batch=2, chips=64, parallel="fsdp=64", remat="offload", per="tokens/chip"),
    dict(match=("Llama3.1-70B", "v6e-128)"), model="llama-3.1-70b.json", target="tpu-v6e-128",
         seq=8192, batch=4, chips=128, parallel="fsdp=128", remat="offload", per="tokens/chip"),
    dict(match=("Mistral-7B", "v6e-8)"), model="mistral-7b.json", target="tpu-v6e-8",
         seq=8192, batch=6, chips=8, parallel="fsdp=8", remat="offload", per="tokens/chip"),
    # GPT-3 175B on Trillium: full remat, 3 sequences of 2048 per chip, FSDP over the slice.
    dict(match=("GPT-3 175B", "v6e-256", "bf16"), model="gpt-3-175b.json", target="tpu-v6e-256",
         seq=2048, batch=3, chips=256, parallel="fsdp=256", remat="layer", per="tokens/chip"),
    # Ironwood (training/ironwood/README.md and each recipe's run_recipe.sh): a chip is two
    # devices; the 70B recipes keep the layer inputs on the device (remat per layer).
    # Held out (session 25: added after the model was built, predicted once; `held_out` keeps
    # them out of every fit, bench/tpu_calibration_fit.py's included), listed before the rows
    # below whose match they would also meet (a row takes the first spec it matches):
    # the fp8 recipes on 256 chips and the Qwen3-235B MoE (per_device_batch_size 16, dropless
    # sparse matmuls, FSDP over the slice's 512 devices, layer inputs offloaded).
    # Held out (session 26: each model made expressible first — latent attention, shared experts
    # and dense first layers, MaxText's local/global layer patterns, Gemma 4's global heads,
    # context parallelism — then predicted once). DeepSeek-V3 (deepseek3-671b recipes: 8 per
    # device, FSDP over the slice's devices, layer inputs offloaded); gpt-oss-120b (10 per
    # device, FSDP 64 x data, layer inputs and MLP outputs offloaded); Gemma 4 26B (16 per
    # device, seq 4096; the 4x4x4 recipe offloads layer inputs under full remat, the 4x8x8 one
    # recomputes them: fsdp 256 x data 2) and 31B (4 per device, seq 8192, fsdp 16 x
    # fsdp_transpose 8, the attention and MLP outputs kept); Llama 3.1 70B at 131072 tokens
    # (0.125 per device: one sequence per context group of 8, FSDP 64).
    *[dict(match=("DeepSeek-V3 671B", "Ironwood (4x4x8)", p), model="maxtext-deepseek3-671b.yml",
           target="tpu7x-128", seq=4096, batch=8, chips=128, parallel="fsdp=256",
           remat="offload", per="tokens/chip", precision=p, held_out=True, grouped=True)
      for p in ("bf16", "fp8")],
    *[dict(match=("DeepSeek-V3 671B", "Ironwood", p), model="maxtext-deepseek3-671b.yml",
           target="tpu7x-256", seq=4096, batch=8, chips=256, parallel="fsdp=512",
           remat="offload", per="tokens/chip", precision=p, held_out=True, grouped=True)
      for p in ("bf16", "fp8")],
    *[dict(match=("gpt-oss-120b", topology), model="maxtext-gpt-oss-120b.yml",
           target=target, seq=8192, batch=10, chips=chips, parallel=parallel, remat="offload",
           per="tokens/chip", held_out=True, grouped=True)
      for topology, target, chips, parallel in (("4x4x4", "tpu7x-64", 64, "data=2,fsdp=64"),
                                                ("4x8x8", "tpu7x-256", 256, "data=8,fsdp=64"))],
    dict(match=("Gemma4-26B", "4x4x4"), model="maxtext-gemma4-26b.yml", target="tpu7x-64",
         seq=4096, batch=16, chips=64, parallel="fsdp=128", remat="offload", per="tokens/chip",
         held_out=True, grouped=True),
    dict(match=("Gemma4-26B", "4x8x8"), model="maxtext-gemma4-26b.yml", target="tpu7x-256",
         seq=4096, batch=16, chips=256, parallel="data=2,fsdp=256", remat="layer",
         per="tokens/chip", held_out=True, grouped=True),
    dict(match=("Gemma4-31B", "4x4x4"), model="maxtext-gemma4-31b.yml", target="tpu7x-64",
         seq=8192, batch=4, chips=64, parallel="fsdp=128", remat="layer", per="tokens/chip",
         held_out=True),
    *[dict(match=("Llama3.1-70B", "seq 131072", p), model="llama-3.1-70b.json",
           target="tpu7x-256", seq=131072, batch=1, chips=256, parallel="fsdp=64,cp=8",
           remat="layer", per="tokens/chip", precision=p, held_out=True)
      for p in ("bf16", "fp8")],
    # Held out (session 26, after the Ironwood rows above and the grouped-matmul fit on them):
    # MaxText's v5p and Trillium MoE recipes (benchmarks/maxtext_v5p_model_configs.py and
    # maxtext_trillium_model_configs.py at the commits their READMEs name), whose generations have
    # no MoE run of their own: the dropless ones take TPU7x's grouped-matmul efficiency.
    # DeepSeek-V3 on v5p-1024 (6 per device, seq 8192, FSDP 512, layer inputs and out_proj
    # offloaded); Llama 4 Scout (8 per device, FSDP over 512 chips, layer inputs offloaded) and
    # Maverick (4 per device, FSDP 32 x tensor 4, layer inputs and Q/K/V/O offloaded); Mixtral
    # 8x22B (capacity 1.25 with dense dispatch, FSDP 64 x expert 4, offloaded, weight_dtype
    # bfloat16: first predicted with fp32 weights, a misreading of the recipe); Gemma 3 12B at
    # 32,768 tokens (1 per device, FSDP 256, layer inputs kept).
    dict(match=("DeepSeek-V3 671B", "v5p-1024"), model="maxtext-deepseek3-671b.yml",
         target="tpu-v5p-1024", seq=8192, batch=6, chips=512, parallel="fsdp=512",
         remat="offload", per="tokens/chip", held_out=True, grouped=True),
    dict(match=("Llama4-Scout-17B-16E", "v5p-1024"), model="maxtext-llama4-scout-17b-16e.yml",
         target="tpu-v5p-1024", seq=8192, batch=8, chips=512, parallel="fsdp=512",
         remat="offload", per="tokens/chip", held_out=True, grouped=True),
    dict(match=("Llama4-Maverick-17B-128E", "v5p-256"),
         model="maxtext-llama4-maverick-17b-128e.yml", target="tpu-v5p-256", seq=8192, batch=4,
         chips=128, parallel="fsdp=32,tp=4", remat="offload", per="tokens/chip", held_out=True,
         grouped=True),
    dict(match=("Mixtral-8x22B", "v6e-256"), model="maxtext-mixtral-8x22b.yml",
         target="tpu-v6e-256", seq=4096, batch=8, chips=256, parallel="fsdp=64,ep=4",
         remat="offload", per="tokens/chip", moe_capacity_factor=1.25, held_out=True,
         precision="bf16-params"),
    # The same recipe on two and four v6e-256 slices, data parallel over DCN (session 30, held
    # out; listed first, as the one-slice spec would match them).
    *[dict(match=("Gemma3-12B", f"{n}x v6e-256"), model="maxtext-gemma3-12b.yml",
           target="tpu-v6e-256", seq=32768, batch=1, chips=256 * n, slices=n, dcn="data",
           parallel="fsdp=256", remat="layer", per="tokens/chip", held_out=True)
      for n in (2, 4)],
    dict(match=("Gemma3-12B", "v6e-256"), model="maxtext-gemma3-12b.yml", target="tpu-v6e-256",
         seq=32768, batch=1, chips=256, parallel="fsdp=256", remat="layer", per="tokens/chip",
         held_out=True),
    dict(match=("Llama3.1-70B", "Ironwood (4x8x8)", "fp8"), model="llama-3.1-70b.json",
         target="tpu7x-256", seq=8192, batch=2, chips=256, parallel="fsdp=512", remat="layer",
         per="tokens/chip", precision="fp8", held_out=True),
    dict(match=("Llama3.1-405B", "Ironwood", "fp8"), model="llama-3.1-405b.json",
         target="tpu7x-256", seq=8192, batch=3, chips=256, parallel="fsdp=256", remat="offload",
         per="tokens/chip", precision="fp8", held_out=True),
    dict(match=("Qwen3-235B-A22B", "Ironwood", "bf16"), model="maxtext-qwen3-235b-a22b.yml",
         target="tpu7x-256", seq=4096, batch=16, chips=256, parallel="fsdp=512",
         remat="offload", per="tokens/chip", held_out=True, grouped=True),
    dict(match=("Qwen3-235B-A22B", "Ironwood", "fp8"), model="maxtext-qwen3-235b-a22b.yml",
         target="tpu7x-256", seq=4096, batch=16, chips=256, parallel="fsdp=512",
         remat="offload", per="tokens/chip", precision="fp8", held_out=True, grouped=True),
    dict(match=("Llama3.1-70B", "Ironwood (4x8x8)", "bf16"), model="llama-3.1-70b.json",
         target="tpu7x-256", seq=8192, batch=2, chips=256, parallel="fsdp=512", remat="layer",
         per="tokens/chip"),
    dict(match=("Llama3.1-70B", "Ironwood", "bf16"), model="llama-3.1-70b.json",
         target="tpu7x-64", seq=8192, batch=2, chips=64, parallel="fsdp=128", remat="layer",
         per="tokens/chip"),
    # fp8 (MaxText quantization=fp8): the same recipes with fp8 matmuls.
    dict(match=("Llama3.1-70B", "Ironwood", "fp8"), model="llama-3.1-70b.json",
         target="tpu7x-64", seq=8192, batch=2, chips=64, parallel="fsdp=128", remat="layer",
         per="tokens/chip", precision="fp8"),
    # tpu-recipes' Trillium GPT-3 "fp8" recipe runs MaxText's gpt_3_175b benchmark model, which
    # sets quantization=int8 (AQT; benchmarks/maxtext_trillium_model_configs.py): read as fp8 (at
    # the bf16 rate: Trillium has no fp8 unit) until session 33. Its step against the bf16
    # recipe's is what tpu-v6e.json's int8_matmul_share is taken from.
    dict(match=("GPT-3 175B", "v6e-256", "int8"), model="gpt-3-175b.json", target="tpu-v6e-256",
         seq=2048, batch=3, chips=256, parallel="fsdp=256", remat="layer", per="tokens/chip",
         precision="int8"),
    # MaxText's long-context Llama 3.1 8B variant (16 query heads of 256, 4 KV heads) on v5p-128
    # (tpu-recipes training/v5p/Llama3.1-8B-LongContext-Maxtext/cluster_toolkit): ring context
    # parallelism (context_parallel_strategy=ring) and num_vocab_tiling=16, `batch` the sequences
    # per context group. remat_policy custom keeps the layer input on the device (`layer`) or
    # offloads it (`offload`), and up to 4M the attention output (`context` device or offload:
    # --keep-attention-output); the 10M run remats fully, the 14M one recomputes the context.
    # Held out (session 29).
    *[dict(match=("Llama3.1-8B long context", f"seq {seq:,},"),
           model="llama-3.1-8b-wide-heads.json", target="tpu-v5p-128", seq=seq, batch=batch,
           chips=64, parallel=parallel, remat=remat, per="tokens/chip", ring_context=True,
           vocab_tiles=16, keep_attention_output=keep, held_out=True)
      for seq, parallel, batch, remat, keep in (
          (65536, "cp=4,fsdp=16", 2, "layer", True), (262144, "cp=16,fsdp=4", 2, "offload", True),
          (1048576, "cp=64", 2, "layer", True), (2097152, "cp=64", 2, "offload", True),
          (4194304, "cp=64", 2, "offload", True), (10485760, "cp=64", 1, "layer", False),
          (14680064, "cp=64", 1, "offload", False))],
    # Rows published as MFU (session 29, held out: predicted once when added), against the
    # tool's own MFU (model FLOPs without recompute over the step at the precision's peak).
    # Megatron-LM's 530B GPT (MT-NLG: 105 layers, hidden 20480, 128 heads, Korthikanti et al.
    # 2022) with sequence parallelism and selective recompute, which recomputes only the attention
    # scores a fused attention kernel recomputes anyway (remat none); the global batch is one
    # sequence a GPU (the published MFU x iteration time x 312 TFLOP/s x GPUs over Megatron's
    # 72 B s l h^2 (1 + s/6h + V/12hl) FLOPs a sequence gives 280 and 2,240); TP8 x PP35, the
    # non-interleaved schedule (Megatron's default; the row names no virtual stages).
    dict(match=("GPT 530B (Megatron-LM)", "TP8xPP35"), model="mt-nlg-530b.json",
         target="nvidia-a100-80gb-280", seq=2048, batch=1, micro_batches=280, chips=280,
         parallel="tp=8,pp=35", remat="none", per="mfu", held_out=True),
    dict(match=("GPT 530B (Megatron-LM)", "8-way DP"), model="mt-nlg-530b.json",
         target="nvidia-a100-80gb-2240", seq=2048, batch=1, micro_batches=280, chips=2240,
         parallel="data=8,tp=8,pp=35", remat="none", per="mfu", held_out=True),
    # PaLM 540B (Chowdhery et al. 2022: 118 layers, d_model 18432, 48 heads of 256, one key/value
    # head, SwiGLU of 73,728, 256k shared vocabulary; its parallel attention and MLP cost what the
    # sequential block does) on two v4 pods: 12-way model parallel x 256-way FSDP in each pod,
    # data parallel over DCN between them, 2,048 sequences of 2,048 (4 a replica). The paper's
    # HFU 57.8% against MFU 46.2% says it rematerialised about three quarters of the forward;
    # `layer` recomputes all of it (a judgement: the closest remat option).
    dict(match=("PaLM 540B",), model="palm-540b.json", target="tpu-v4-6144", slices=2, dcn="data",
         seq=2048, batch=4, chips=6144, parallel="fsdp=256,tp=12", remat="layer", per="mfu",
         held_out=True),
    # GPT-3 175B on v5p-1024 (MaxText configs/tpu/v5p/gpt3_175b/v5p_1024.sh, the MLPerf 4.0
    # set-up): 4 sequences per device over fsdp=64 x tp=8 (32 per tensor-parallel replica), full
    # remat, AQT int8 (quantization=int8). Held out: predicted once when int8 was added (session 29).
    dict(match=("GPT-3 175B", "v5p-1024"), model="gpt-3-175b.json", target="tpu-v5p-1024",
         seq=2048, batch=32, chips=512, parallel="fsdp=64,tp=8", remat="layer", per="tokens/chip",
         precision="int8", held_out=True),
    dict(match=("Llama3.1-405B", "Ironwood"), model="llama-3.1-405b.json", target="tpu7x-256",
         seq=8192, batch=3, chips=256, parallel="fsdp=256", remat="offload", per="tokens/chip"),
    dict(match=("Llama2-70B", "v6e-256)"), model="llama-2-70b.json", target="tpu-v6e-256",
         seq=4096, batch=2, chips=256, parallel="fsdp=256", remat="offload", per="tokens/chip"),
    # MaxText's mixtral_8x7b_dropped: capacity_factor 1.25 with sparse_matmul and megablox off,
    # i.e. one-hot dispatch and combine einsums and experts padded to capacity.
    dict(match=("Mixtral-8x7B", "v6e-256)"), model="mixtral-8x7b.json", target="tpu-v6e-256",
         seq=4096, batch=12, chips=256, parallel="fsdp=256", remat="offload", per="tokens/chip",
         moe_capacity_factor=1.25),
    # MaxText's 32B performance configs (configs/v5e/32b.sh: remat full, 4 per device, FSDP
    # over the slice; configs/v5p/32b.sh: remat minimal (dot outputs kept: our "dots"), 7 per
    # device, FSDP 16 x tensor 4), seq 2048; published as TFLOP/s per chip.
    dict(match=("MaxText synthetic 32B dense", "v5e-256"), model="maxtext-32b.yml",
         target="tpu-v5e-256", seq=2048, batch=4, chips=256, parallel="fsdp=256", remat="layer",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 32B dense", "v5p-128"), model="maxtext-32b.yml",
         target="tpu-v5p-128", seq=2048, batch=7, chips=64, parallel="fsdp=16,tp=4", remat="dots",
         per="tflops/chip"),
    # The rest of those tables (configs/tpu/v5e/{16b,64b,128b}.sh, configs/tpu/v5p/{64b,...}.sh:
    # MaxText's remat `full` is our "layer", `minimal` our "dots", `qkv_proj_offloaded` our
    # "offload"; ici_fsdp_parallelism=-1 takes the chips the tensor axis leaves).
    dict(match=("MaxText synthetic 16B dense", "v5e-256"), model="maxtext-16b.yml",
         target="tpu-v5e-256", seq=2048, batch=6, chips=256, parallel="fsdp=256", remat="layer",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 64B dense", "v5e-256"), model="maxtext-64b.yml",
         target="tpu-v5e-256", seq=2048, batch=2, chips=256, parallel="fsdp=256", remat="layer",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 128B dense", "v5e-256"), model="maxtext-128b.yml",
         target="tpu-v5e-256", seq=2048, batch=1, chips=256, parallel="fsdp=16,tp=16",
         remat="offload", per="tflops/chip"),
    dict(match=("MaxText synthetic 64B dense", "v5p-128"), model="maxtext-64b.yml",
         target="tpu-v5p-128", seq=2048, batch=3, chips=64, parallel="fsdp=16,tp=4", remat="dots",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 128B dense", "v5p-256"), model="maxtext-128b.yml",
         target="tpu-v5p-256", seq=2048, batch=1, chips=128, parallel="fsdp=16,tp=8", remat="dots",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 256B dense", "v5p-1024"), model="maxtext-256b.yml",
         target="tpu-v5p-1024", seq=2048, batch=1, chips=512, parallel="fsdp=64,tp=8", remat="dots",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 512B dense", "v5p-1024"), model="maxtext-512b.yml",
         target="tpu-v5p-1024", seq=2048, batch=2, chips=512, parallel="fsdp=64,tp=8",
         remat="layer", per="tflops/chip"),
    dict(match=("MaxText synthetic 1024B dense", "v5p-4096"), model="maxtext-1024b.yml",
         target="tpu-v5p-4096", seq=2048, batch=2, chips=2048, parallel="fsdp=128,tp=16",
         remat="layer", per="tflops/chip"),
    # TPU v4 (configs/tpu/v4/22b.sh, 52b.sh): remat full, FSDP over the slice's chips.
    dict(match=("MaxText synthetic 22B dense", "v4-128"), model="maxtext-v4-22b.yml",
         target="tpu-v4-128", seq=2048, batch=13, chips=64, parallel="fsdp=64", remat="layer",
         per="tflops/chip"),
    dict(match=("MaxText synthetic 52B dense", "v4-384"), model="maxtext-v4-52b.yml",
         target="tpu-v4-384", seq=2048, batch=7, chips=192, parallel="fsdp=192", remat="layer",
         per="tflops/chip"),
    dict(match=("Llama2-70B", "TPU v5p"), model="llama-2-70b.json", target="tpu-v5p-1024",
         seq=4096, batch=4, chips=512, parallel="fsdp=512", remat="layer", per="tokens/chip"),
    dict(match=("Llama2-7B", "8x H100", "A3"), model="llama-2-7b.json", target="nvidia-h100-8",
         seq=4096, batch=4, chips=8, parallel="fsdp=8", remat="layer", per="tflops/chip"),
    # Serving (vLLM on TPU, tpu-recipes): Llama 3.3 70B has Llama 3.1 70B's architecture; one
    # replica tensor parallel over the 8 chips, continuous batching.
    dict(match=("Llama-3.3-70B-Instruct", "concurrency 64"), model="llama-3.1-70b.json",
         target="tpu-v6e-8", serve=(1000, 1000, 64), chips=8, per="serve"),
    dict(match=("Llama-3.3-70B-Instruct", "concurrency 128"), model="llama-3.1-70b.json",
         target="tpu-v6e-8", serve=(1000, 1000, 128), chips=8, per="serve"),
    # NVIDIA NIM 1.8.0 serving Llama 3.3 70B with its fp8 TP2 profile on two H100s (genai-perf at a
    # fixed concurrency, 5000 tokens in and 500 out): continuous batching, one replica tensor
    # parallel over both GPUs. The KV cache is taken as fp8: with a 16-bit cache 50 sequences of
    # 5,500 tokens (84 GB) would not fit beside 70 GB of fp8 weights, and the table shows them
    # served without queueing (the queue starts between 50 and 100, where an fp8 cache runs out).
    dict(match=("Llama-3.3-70B-Instruct (NVIDIA NIM 1.8.0)", "500 in / 2000 out, concurrency 1;"),
         model="llama-3.1-70b.json", target="nvidia-h100-2", serve=(500, 2000, 1), chips=2,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    dict(match=("Llama-3.3-70B-Instruct (NVIDIA NIM 1.8.0)", "5000 in / 500 out, concurrency 1;"),
         model="llama-3.1-70b.json", target="nvidia-h100-2", serve=(5000, 500, 1), chips=2,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    dict(match=("Llama-3.3-70B-Instruct (NVIDIA NIM 1.8.0)", "5000 in / 500 out, concurrency 5;"),
         model="llama-3.1-70b.json", target="nvidia-h100-2", serve=(5000, 500, 5), chips=2,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    dict(match=("Llama-3.3-70B-Instruct (NVIDIA NIM 1.8.0)", "5000 in / 500 out, concurrency 25;"),
         model="llama-3.1-70b.json", target="nvidia-h100-2", serve=(5000, 500, 25), chips=2,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    dict(match=("Llama-3.3-70B-Instruct (NVIDIA NIM 1.8.0)", "5000 in / 500 out, concurrency 50;"),
         model="llama-3.1-70b.json", target="nvidia-h100-2", serve=(5000, 500, 50), chips=2,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    *[jetstream_pt_spec(*row) for row in JETSTREAM_PT],
    # TensorRT-LLM's perf overview (v1.0, PyTorch backend): trtllm-bench at maximum load, its max
    # batch the requests the KV cache holds at ISL + OSL (bench/build/tuning.py, capped at 4,096),
    # so each row is predicted at the smaller of 4,096 and the estimate's own max concurrency,
    # and as the job of TRTLLM_REQUESTS it ran. The KV cache is fp8: nvidia/Llama-3.1-405B-Instruct-
    # FP8 quantizes only the linear layers (its model card), and trtllm-bench sets an fp8 cache for
    # an FP8 checkpoint whose hf_quant_config leaves kv_cache_quant_algo null (TensorRT-LLM's
    # docs/source/performance/perf-benchmarking.md, "Quantization in the PyTorch Flow"); sessions
    # 30-31 read the card alone as a 16-bit cache. Held out (session 30) at that reading.
    *[dict(match=("Llama-3.1-405B (TensorRT-LLM perf overview)", f"ISL/OSL {prompt}/{output},",
                  hardware), model="llama-3.1-405b.json", target=target,
           serve=(prompt, output, 4096), max_seqs=True, chips=8, per="serve", precision="fp8",
           requests=TRTLLM_REQUESTS[(prompt, output)], kv_cache_dtype="fp8", held_out=True)
      for hardware, target in (("8x H200", "nvidia-h200-8"), ("8x H100", "nvidia-h100-8"))
      for prompt, output in TRTLLM_WORKLOADS],
    # The same page's Llama 3.3 70B (H200 TP1, H100 TP2) and Llama 3.1 8B (TP1) rows, the same
    # recipe; session 30 looked at them under both cache readings and left them out, session 32
    # added them with trtllm-bench's fp8 cache (not held out).
    *[dict(match=(f"{model} (TensorRT-LLM perf overview)", f"ISL/OSL {prompt}/{output},",
                  hardware), model=config, target=target,
           serve=(prompt, output, 4096), max_seqs=True, chips=chips, per="serve", precision="fp8",
           requests=TRTLLM_REQUESTS[(prompt, output)], kv_cache_dtype="fp8", held_out=True)
      for model, config, hardware, target, chips in (
          ("Llama-3.3-70B", "llama-3.1-70b.json", "1x H200", "nvidia-h200", 1),
          ("Llama-3.3-70B", "llama-3.1-70b.json", "2x H100", "nvidia-h100-2", 2),
          ("Llama-3.1-8B", "llama-3.1-8b.json", "1x H200", "nvidia-h200", 1),
          ("Llama-3.1-8B", "llama-3.1-8b.json", "1x H100", "nvidia-h100", 1))
      for prompt, output in TRTLLM_WORKLOADS],
    # vLLM on one Ironwood chip (tpu-recipes, Qwen3-32B): TP over the chip's two devices, fp8
    # weights, activations and KV cache; the server runs at most 135 sequences (--max-num-seqs)
    # of the client's 320, and no more than its KV cache holds: `max_seqs` predicts at the smaller
    # of 135 and the estimate's own max concurrency.
    *[dict(match=("Qwen3-32B (vLLM TPU)", name), model="qwen3-32b.json",
           target="tpu-7x", serve=(prompt, output, 135), max_seqs=True, chips=1,
           parallel="tp=2", per="serve_per_chip", precision="fp8", kv_cache_dtype="fp8")
      for name, prompt, output in IRONWOOD_WORKLOADS],
    # vLLM on four Ironwood chips (tpu-recipes, Qwen3-Coder-480B-A35B, an MoE of 160 experts, 8 a
    # token): TP=8 over the 8 devices with the experts spread over them (--enable-expert-parallel);
    # predicted as tp=8, which holds and reads the same expert bytes per device (the all-to-alls
    # that replace the experts' all-reduces are not modelled). 64 sequences in flight.
    *[dict(match=("Qwen3-Coder-480B-A35B (vLLM TPU)", name),
           model="qwen3-coder-480b-a35b.json", target="tpu-7x-4", serve=(prompt, output, 64),
           chips=4, parallel="tp=8", per="serve_per_chip", precision="fp8", kv_cache_dtype="fp8")
      for name, prompt, output in IRONWOOD_WORKLOADS],
    # TensorRT-LLM before 0.7 decoded grouped-query models with its masked multi-head attention
    # kernel (one thread block per sequence and query head; XQA, which reads each key/value
    # head once, came in 0.7): `kv_reads_per_query_head` on its 0.5.0 and v0.6.1 rows.
    # TensorRT-LLM 0.5.0's H100 FP8 table (static batching: every sequence of a batch starts
    # together, as the serving model's round of prefills and decode steps assumes; its
    # benchmarking recipe builds the engines with --enable_fp8 --fp8_kv_cache). LLaMA 7B has
    # Llama 2 7B's architecture; the 70B row is Llama 2 70B (grouped-query attention).
    dict(match=("LLaMA 7B (TensorRT-LLM 0.5.0)", "128 in / 128 out"), model="llama-2-7b.json",
         target="nvidia-h100", serve=(128, 128, 64), chips=1, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 7B (TensorRT-LLM 0.5.0)", "128 in / 2048 out"), model="llama-2-7b.json",
         target="nvidia-h100", serve=(128, 2048, 64), chips=1, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 7B (TensorRT-LLM 0.5.0)", "2048 in / 128 out"), model="llama-2-7b.json",
         target="nvidia-h100", serve=(2048, 128, 64), chips=1, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 7B (TensorRT-LLM 0.5.0)", "2048 in / 2048 out"), model="llama-2-7b.json",
         target="nvidia-h100", serve=(2048, 2048, 32), chips=1, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 70B (TensorRT-LLM 0.5.0)", "128 in / 128 out"), model="llama-2-70b.json",
         target="nvidia-h100-4", serve=(128, 128, 64), chips=4, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 70B (TensorRT-LLM 0.5.0)", "128 in / 2048 out"), model="llama-2-70b.json",
         target="nvidia-h100-4", serve=(128, 2048, 64), chips=4, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 70B (TensorRT-LLM 0.5.0)", "2048 in / 128 out"), model="llama-2-70b.json",
         target="nvidia-h100-4", serve=(2048, 128, 64), chips=4, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    dict(match=("LLaMA 70B (TensorRT-LLM 0.5.0)", "2048 in / 2048 out"), model="llama-2-70b.json",
         target="nvidia-h100-4", serve=(2048, 2048, 64), chips=4, per="serve",
         precision="fp8", kv_cache_dtype="fp8", kv_reads_per_query_head=True),
    *[trtllm_061_spec(*row) for row in TRTLLM_061],
    # The same overview's Qwen3-235B-A22B MoE (its FP8 checkpoint) on 8 H200s and 8 H100s: the
    # MoE recipe runs trtllm-bench with --ep and enable_attention_dp, each GPU serving its own
    # sequences with the whole attention and an eighth of the experts (`--parallel ep=8`), the
    # cache fp8 as above; predicted, as above, at the smaller of 4,096 and the estimate's own max
    # concurrency. Session 30 predicted them as tp=8 (median 23%), session 31 as expert parallel
    # (not held out).
    *[dict(match=("Qwen3-235B-A22B (TensorRT-LLM perf overview)", f"{isl} in / {osl} out",
                  gpu), model="qwen3-235b-a22b.json", target=target, serve=(isl, osl, 4096),
           chips=8, per="serve", precision="fp8", parallel="ep=8", max_seqs=True,
           requests=TRTLLM_REQUESTS[(isl, osl)], kv_cache_dtype="fp8")
      for gpu, target in (("H200", "nvidia-h200-8"), ("H100", "nvidia-h100-8"))
      for isl, osl in TRTLLM_WORKLOADS],
    # TensorRT-LLM v0.7a's Llama2-70B rows on one H200 (its H200 blog; batch sizes from the
    # table's footnote). The KV cache is fp8 (`--kv-cache-dtype fp8`): in bf16 the 192 and 96
    # sequences' caches (127.5 and 123.8 GiB) would not fit beside 65 GiB of fp8 weights.
    dict(match=("Llama2-70B (TensorRT-LLM v0.7a)", "128 in / 128 out"), model="llama-2-70b.json",
         target="nvidia-h200", serve=(128, 128, 960), chips=1, per="serve", precision="fp8",
         kv_cache_dtype="fp8"),
    dict(match=("Llama2-70B (TensorRT-LLM v0.7a)", "128 in / 2048 out"),
         model="llama-2-70b.json", target="nvidia-h200", serve=(128, 2048, 192), chips=1,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    dict(match=("Llama2-70B (TensorRT-LLM v0.7a)", "128 in / 4096 out"),
         model="llama-2-70b.json", target="nvidia-h200", serve=(128, 4096, 96), chips=1,
         per="serve", precision="fp8", kv_cache_dtype="fp8"),
    # ResNet-50 (the bundled ONNX export of torchvision's ResNet-50). DeepLearningExamples'
    # benchmark commands run AMP with `--memory-format nhwc` and FP32/TF32 without it (NCHW); the
    # Flax example runs under XLA, whose GPU layout assignment puts fp16 convolutions in NHWC for
    # the tensor cores (Volta and later). It is predicted with the eager factors all the same: the
    # xla-gpu memory factors are unfitted assumptions that keep every forward output (14.9 GiB of
    # activations at its batch of 256, where XLA's fusions keep far fewer), which would call the
    # run it published "does not fit".
    # The same README's v3-32 and v2-32 runs (the global batch of 1,024 over 32 TensorCores: 32
    # each), held out (session 29); listed first, as the v3-8 spec would match the v3-32 row.
    # MLPerf Inference v0.5 (closed, Google): ResNet-50 v1.5 Offline on one Cloud TPU v3-8, bf16
    # weights and inputs; the batch a core runs is not published (Offline runs large ones: 128
    # taken, where the estimate's throughput no longer depends on it). Held out (session 30).
    dict(match=("ResNet-50 v1.5 (MLPerf Inference v0.5)", "TPU v3 (v3-8)"), model=RESNET,
         target="tpu-v3-8", batch=128, chips=4, per="samples", inference=True, held_out=True),
    dict(match=("ResNet-50 (Flax example)", "TPU v3 (v3-32)"), model=RESNET, target="tpu-v3-32",
         batch=32, chips=16, per="samples", held_out=True),
    dict(match=("ResNet-50 (Flax example)", "TPU v2 (v2-32)"), model=RESNET, target="tpu-v2-32",
         batch=32, chips=16, per="samples", held_out=True),
    dict(match=("ResNet-50 (Flax example)", "TPU v3"), model=RESNET, target="tpu-v3-8", batch=128,
         chips=4, per="samples"),
    dict(match=("ResNet-50 (Flax example)", "8x V100"), model=RESNET, target="nvidia-v100-8",
         batch=256, chips=8, precision="fp16", per="samples", channels_last=True, source="flax"),
    dict(match=("ResNet-50 v1.5", "1x A100"), model=RESNET, target="nvidia-a100-80gb", batch=256, chips=1,
         precision="fp16", per="samples", channels_last=True),
    dict(match=("ResNet-50 v1.5", "8x A100 80GB (DGX A100)", "fp16"), model=RESNET,
         target="nvidia-a100-80gb-8", batch=256, chips=8, precision="fp16", per="samples",
         channels_last=True),
    dict(match=("ResNet-50 v1.5", "8x A100 80GB (DGX A100)", "tf32"), model=RESNET,
         target="nvidia-a100-80gb-8", batch=256, chips=8, precision="fp32", per="samples"),
    dict(match=("ResNet-50 v1.5", "1x V100"), model=RESNET, target="nvidia-v100", batch=256, chips=1,
         precision="fp16", per="samples", channels_last=True),
    dict(match=("ResNet-50 v1.5", "8x V100"), model=RESNET, target="nvidia-v100-8", batch=256,
         chips=8, precision="fp16", per="samples", channels_last=True),
    # BERT-large pretraining (DeepLearningExamples), per-GPU micro-batch as they ran it.
    dict(match=("BERT-large", "8x A100", "phase 1"), model="bert-large-uncased.json",
         target="nvidia-a100-80gb-8", seq=128, batch=256, chips=8, precision="fp16", per="samples"),
    dict(match=("BERT-large", "8x A100", "phase 2"), model="bert-large-uncased.json",
         target="nvidia-a100-80gb-8", seq=512, batch=32, chips=8, precision="fp16", per="samples"),
    dict(match=("BERT-large", "8x V100"), model="bert-large-uncased.json", target="nvidia-v100-32gb-8",
         seq=128, batch=64, chips=8, precision="fp16", per="samples"),
    # Megatron-Bridge's performance tables (NeMo containers 25.09-26.04.01; recipes in
    # scripts/performance): Megatron-core with Transformer Engine, each data replica running
    # GBS / (MBS x replicas) micro-batches of MBS sequences, the pipelines' interleaved 1F1B.
    # Added in session 27 once pipeline parallelism and micro-batches were built; predicted once
    # before anything was fitted to them. Expert parallelism is carved from the data replicas.
    # Every recipe runs Megatron-core's distributed optimizer (recipes/common.py). GPT-OSS's
    # recipes recompute the layer norms and the experts' activation (recompute_modules
    # layernorm, moe_act): `dots`, which keeps the matmuls' inputs and reruns the pointwise ops
    # (set after the first look, from the recipe). DeepSeek-V3's recompute its MLA up-projections
    # and MLPs, which no --remat policy says; costed without. Its H100 run (the 25.09 container)
    # dispatched with DeepEP and overlapped the expert all-to-alls with the other micro-batch's
    # compute: scripts/performance/run_script.py at af6bc366d, the 25.09 tables' commit, sets
    # enable_deepep and overlap_moe_expert_parallel_comm for the H100 (session 32, from the
    # recipe, after the first look: -47% without them).
    dict(match=("Llama3-8B (Megatron-Bridge)", "DGX-H100"), model="llama-3.1-8b.json",
         target="nvidia-h100-8", seq=8192, batch=1, micro_batches=16, chips=8,
         parallel="fsdp=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Llama3-70B (Megatron-Bridge)", "DGX-H100"), model="llama-3.1-70b.json",
         target="nvidia-h100-64", seq=8192, batch=1, micro_batches=128, chips=64,
         parallel="tp=4,pp=8,vp=5", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Llama3.1-405B (Megatron-Bridge)", "DGX-H100"), model="llama-3.1-405b.json",
         target="nvidia-h100-1024", seq=8192, batch=1, micro_batches=192, chips=1024,
         parallel="tp=8,cp=2,pp=8,vp=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True, ring_context=True),
    dict(match=("GPT-OSS-120B (Megatron-Bridge)", "DGX-H100"), model="gpt-oss-120b.json",
         target="nvidia-h100-64", seq=4096, batch=1, micro_batches=80, chips=64,
         parallel="ep=8,pp=4", remat="dots", precision="bf16", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Qwen3-30B-A3B (Megatron-Bridge)", "DGX-H100"), model="qwen3-30b-a3b.json",
         target="nvidia-h100-16", seq=4096, batch=1, micro_batches=64, chips=16,
         parallel="ep=16", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True,
         dedup_expert_dispatch=True),
    dict(match=("DeepSeek-V3 (Megatron-Bridge)", "DGX-H100"), model="deepseek-v3.json",
         target="nvidia-h100-1024", seq=4096, batch=1, micro_batches=128, chips=1024,
         parallel="tp=2,ep=64,pp=8,vp=4", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True,
         dedup_expert_dispatch=True, overlap_expert_comm=True),
    # The same tables' B200 MoE rows from the 26.04.01 container (the H100 rows above are from
    # it; the B200 rows below from 25.11, before HybridEP dispatch and MoE CUDA graphs: Qwen3-30B
    # ran 9,299 tokens/s/GPU there, 27,136 here). Session 28's held-out batch, predicted once
    # before anything changed. DeepSeek-V3's recipe recomputes its MLA up-projections and MLPs,
    # which no --remat policy says; costed without, as on the H100.
    dict(match=("DeepSeek-V3 (Megatron-Bridge)", "DGX-B200", "26.04.01"), model="deepseek-v3.json",
         target="nvidia-b200-256", seq=4096, batch=1, micro_batches=128, chips=256,
         parallel="ep=32,pp=8,vp=2", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True, dedup_expert_dispatch=True, overlap_expert_comm=True),
    dict(match=("GPT-OSS-120B (Megatron-Bridge)", "DGX-B200", "26.04.01"), model="gpt-oss-120b.json",
         target="nvidia-b200-64", seq=4096, batch=4, micro_batches=5, chips=64,
         parallel="ep=8", remat="dots", precision="bf16", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Qwen3-30B-A3B (Megatron-Bridge)", "DGX-B200", "26.04.01"), model="qwen3-30b-a3b.json",
         target="nvidia-b200-8", seq=4096, batch=4, micro_batches=16, chips=8,
         parallel="ep=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True,
         dedup_expert_dispatch=True, overlap_expert_comm=True),
    dict(match=("Qwen3-235B-A22B (Megatron-Bridge)", "DGX-B200", "26.04.01"),
         model="qwen3-235b-a22b.json", target="nvidia-b200-256", seq=4096, batch=1,
         micro_batches=256, chips=256, parallel="ep=8,pp=8", remat="none", precision="fp8",
         per="tokens/chip", distributed_optimizer=True, dedup_expert_dispatch=True,
         overlap_expert_comm=True),
    # Megatron-Bridge's 26.06 SFT rows (full fine-tuning of Llama 3 70B on packed 4,096-token
    # sequences, GBS 32 over 32 GPUs: few micro-batches a replica, so the pipeline's fill and
    # drain weigh). Held out (session 29).
    *[dict(match=("Llama3-70B SFT (Megatron-Bridge)", f", {prec};", system), model="llama-3.1-70b.json",
           target=target, seq=4096, batch=1, micro_batches=mbs, chips=32, parallel=parallel,
           remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True,
           held_out=True)
      for system, prec, target, parallel, mbs in (
          ("GB300", "FP8", "nvidia-gb300-32", "tp=1,pp=2,vp=20", 2),
          ("GB300", "MXFP8", "nvidia-gb300-32", "tp=1,pp=2,vp=20", 2),
          ("GB200", "FP8", "nvidia-gb200-32", "tp=1,pp=8,vp=10", 8),
          ("GB200", "MXFP8", "nvidia-gb200-32", "tp=1,pp=8,vp=10", 8),
          ("H100", "FP8", "nvidia-h100-32", "tp=4,pp=4,vp=5", 16))],
    # Its 26.06 LoRA rows (Llama 3 70B, GBS 32 over 8 GPUs, rank 32: Megatron-Bridge's LoRA
    # default; the perf recipes adapt linear_qkv alone, `peft.target_modules`). Held out
    # (session 29: first read with adapters on every linear, before the recipe was read).
    *[dict(match=("Llama3-70B LoRA (Megatron-Bridge)", f", {prec};", system),
           model="llama-3.1-70b.json", target=target, seq=4096, batch=1, micro_batches=mbs,
           chips=8, parallel=parallel, remat="none", precision="fp8", per="tokens/chip",
           distributed_optimizer=True, lora=32, lora_targets="qkv", held_out=True)
      for system, prec, target, parallel, mbs in (
          ("GB300", "FP8", "nvidia-gb300-8", "tp=1,pp=2,vp=20", 8),
          ("GB300", "MXFP8", "nvidia-gb300-8", "tp=1,pp=2,vp=20", 8),
          ("GB200", "FP8", "nvidia-gb200-8", "tp=1,pp=2,vp=20", 8),
          ("GB200", "MXFP8", "nvidia-gb200-8", "tp=1,pp=4,vp=20", 16),
          ("H100", "FP8", "nvidia-h100-8", "tp=2,pp=4,vp=20", 32))],
    # The 26.06 table's HGX B300 MoE rows, added with the nvidia-b300 target (it has no fitted
    # runs: the B200's factor). Recipes (perf_recipes/*/b300): HybridEP dispatch; Qwen3 30B and
    # DeepSeek-V3 with full-iteration CUDA graphs and the all-to-alls overlapped, GPT-OSS without.
    # Held out (session 29).
    dict(match=("DeepSeek-V3 (Megatron-Bridge)", "26.06", "DGX-B300"), model="deepseek-v3.json",
         target="nvidia-b300-256", seq=4096, batch=2, micro_batches=64, chips=256,
         parallel="ep=8,pp=8", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True, dedup_expert_dispatch=True, overlap_expert_comm=True,
         held_out=True),
    dict(match=("GPT-OSS-120B (Megatron-Bridge)", "26.06", "DGX-B300"), model="gpt-oss-120b.json",
         target="nvidia-b300-64", seq=4096, batch=4, micro_batches=5, chips=64, parallel="ep=8",
         remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True,
         dedup_expert_dispatch=True, held_out=True),
    dict(match=("Qwen3-30B-A3B (Megatron-Bridge)", "26.06", "DGX-B300"),
         model="qwen3-30b-a3b.json", target="nvidia-b300-8", seq=4096, batch=8, micro_batches=8,
         chips=8, parallel="ep=8", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True, dedup_expert_dispatch=True, overlap_expert_comm=True,
         held_out=True),
    # Megatron-Bridge's current table (NeMo 26.08, docs/performance-summary.md at 067f987), MoE
    # only: every MXFP8 recipe runs HybridEP's dispatch with the all-to-alls overlapped
    # (_enable_hybridep_full_iteration_mxfp8, _enable_deepseek_full_iteration_mxfp8,
    # _apply_gpt_oss_120b_full_iter_fp8mx_configs), full-iteration CUDA graphs and the fused
    # grouped-MLP kernels. Held out (session 29), listed before the 26.04.01 specs they would
    # also match.
    *[dict(match=(model, "26.08", f"DGX-{system}"), model=config,
           target=f"nvidia-{system.lower()}-{chips}", seq=4096, batch=mbs,
           micro_batches=gbs // (mbs * chips // pp), chips=chips, parallel=parallel, remat="none",
           precision="fp8", per="tokens/chip", distributed_optimizer=True,
           dedup_expert_dispatch=True, overlap_expert_comm=True, held_out=True)
      for model, config, system, chips, gbs, mbs, pp, parallel in (
          ("DeepSeek-V3 (Megatron-Bridge)", "deepseek-v3.json", "GB300", 256, 4096, 1, 2,
           "ep=32,pp=2,vp=8"),
          ("DeepSeek-V3 (Megatron-Bridge)", "deepseek-v3.json", "GB200", 256, 4096, 1, 4,
           "ep=64,pp=4,vp=4"),
          ("GPT-OSS-120B (Megatron-Bridge)", "gpt-oss-120b.json", "GB300", 64, 1280, 4, 1, "ep=16"),
          ("GPT-OSS-120B (Megatron-Bridge)", "gpt-oss-120b.json", "GB200", 64, 1280, 4, 1, "ep=64"),
          ("Qwen3-30B-A3B (Megatron-Bridge)", "qwen3-30b-a3b.json", "GB300", 8, 512, 8, 1, "ep=8"),
          ("Qwen3-30B-A3B (Megatron-Bridge)", "qwen3-30b-a3b.json", "GB200", 8, 512, 4, 1, "ep=8"),
          ("Qwen3-235B-A22B (Megatron-Bridge)", "qwen3-235b-a22b.json", "GB300", 256, 8192, 2, 4,
           "ep=32,pp=4,vp=12"),
          ("Qwen3-235B-A22B (Megatron-Bridge)", "qwen3-235b-a22b.json", "GB200", 256, 8192, 1, 8,
           "ep=32,pp=8,vp=3"))],
    # GB200 (NVL72) rows of the same 26.04.01 table, added with the GB200 target (session 28): it
    # has no fitted runs, so they check the B200's factor on its sibling. Recipes: no recompute
    # for the dense runs; Qwen3's HybridEP dispatch with the all-to-alls overlapped. The table's
    # Llama 3 70B FSDP run offloads 40 layers' activations to the Grace CPU and the 405B run at
    # VP8 cuts 126 layers into 128 chunks (the embedding and loss as layers): neither has an
    # estimate option yet.
    dict(match=("Llama3-70B (Megatron-Bridge)", "DGX-GB200"), model="llama-3.1-70b.json",
         target="nvidia-gb200-64", seq=8192, batch=1, micro_batches=32, chips=64,
         parallel="tp=2,pp=4,vp=5", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True),
    dict(match=("Llama3.1-405B (Megatron-Bridge)", "DGX-GB200"), model="llama-3.1-405b.json",
         target="nvidia-gb200-256", seq=8192, batch=1, micro_batches=384, chips=256,
         parallel="tp=4,pp=16,vp=4", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True),
    dict(match=("Qwen3-30B-A3B (Megatron-Bridge)", "DGX-GB200"), model="qwen3-30b-a3b.json",
         target="nvidia-gb200-8", seq=4096, batch=4, micro_batches=16, chips=8,
         parallel="ep=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True,
         dedup_expert_dispatch=True, overlap_expert_comm=True),
    dict(match=("Qwen3-235B-A22B (Megatron-Bridge)", "DGX-GB200"), model="qwen3-235b-a22b.json",
         target="nvidia-gb200-256", seq=4096, batch=1, micro_batches=256, chips=256,
         parallel="ep=32,pp=8,vp=3", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True, dedup_expert_dispatch=True, overlap_expert_comm=True),
    # GB300 (NVL72) dense rows of the same table, added with the GB300 target (session 28): its
    # factors are its siblings', the B200's. Recipes: no recompute; the FSDP rows offload
    # activations to the Grace CPU (not expressible).
    dict(match=("Llama3-70B (Megatron-Bridge)", "DGX-GB300"), model="llama-3.1-70b.json",
         target="nvidia-gb300-64", seq=8192, batch=1, micro_batches=16, chips=64,
         parallel="pp=4,vp=5", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True),
    dict(match=("Llama3.1-405B (Megatron-Bridge)", "DGX-GB300", "TP 4"), model="llama-3.1-405b.json",
         target="nvidia-gb300-256", seq=8192, batch=1, micro_batches=192, chips=256,
         parallel="tp=4,pp=8,vp=4", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True),
    dict(match=("Llama3.1-405B (Megatron-Bridge)", "DGX-GB300", "CP 2"), model="llama-3.1-405b.json",
         target="nvidia-gb300-256", seq=8192, batch=1, micro_batches=192, chips=256,
         parallel="tp=2,cp=2,pp=8,vp=4", remat="none", precision="fp8", per="tokens/chip",
         distributed_optimizer=True, ring_context=True),
    dict(match=("Llama3-8B (Megatron-Bridge)", "DGX-B200"), model="llama-3.1-8b.json",
         target="nvidia-b200-8", seq=8192, batch=2, micro_batches=8, chips=8,
         parallel="data=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Llama3.1-405B (Megatron-Bridge)", "DGX-B200"), model="llama-3.1-405b.json",
         target="nvidia-b200-128", seq=8192, batch=1, micro_batches=32, chips=128,
         parallel="tp=4,cp=2,pp=8,vp=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True, ring_context=True),
    dict(match=("GPT-OSS-120B (Megatron-Bridge)", "DGX-B200"), model="gpt-oss-120b.json",
         target="nvidia-b200-64", seq=4096, batch=4, micro_batches=2, chips=64,
         parallel="ep=8", remat="dots", precision="bf16", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Qwen3-30B-A3B (Megatron-Bridge)", "DGX-B200"), model="qwen3-30b-a3b.json",
         target="nvidia-b200-8", seq=4096, batch=1, micro_batches=64, chips=8,
         parallel="ep=8", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=("Qwen3-235B-A22B (Megatron-Bridge)", "DGX-B200"), model="qwen3-235b-a22b.json",
         target="nvidia-b200-64", seq=4096, batch=1, micro_batches=128, chips=64,
         parallel="ep=8,pp=8,vp=2", remat="none", precision="fp8", per="tokens/chip", distributed_optimizer=True),
    # NeMo's performance summaries (24.09 on H100, 25.02 on DGX-B200): session 27's second
    # held-out batch, predicted once with the mechanisms above and nothing changed after.
    dict(match=('GPT3-175B (NeMo 24.09)', '128x'), model="gpt-3-175b.json", target="nvidia-h100-128", seq=2048, batch=1,
         micro_batches=64, chips=128, parallel="tp=4,pp=8,vp=6", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('GPT3-175B (NeMo 24.09)', '512x'), model="gpt-3-175b.json", target="nvidia-h100-512", seq=2048, batch=2,
         micro_batches=64, chips=512, parallel="tp=4,pp=8,vp=6", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('Llama2-7B (NeMo 24.09)',), model="llama-2-7b.json", target="nvidia-h100-8", seq=4096, batch=1,
         micro_batches=16, chips=8, parallel="data=8", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('Llama2-13B (NeMo 24.09)',), model="llama-2-13b.json", target="nvidia-h100-16", seq=4096, batch=1,
         micro_batches=32, chips=16, parallel="pp=4,vp=10", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('Llama2-70B (NeMo 24.09)',), model="llama-2-70b.json", target="nvidia-h100-64", seq=4096, batch=1,
         micro_batches=32, chips=64, parallel="tp=4,pp=4,vp=20", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('Llama3-8B (NeMo 24.09)',), model="llama-3.1-8b.json", target="nvidia-h100-8", seq=8192, batch=1,
         micro_batches=32, chips=8, parallel="cp=2", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True, ring_context=True),
    dict(match=('Llama3-70B (NeMo 24.09)',), model="llama-3.1-70b.json", target="nvidia-h100-64", seq=8192, batch=1,
         micro_batches=64, chips=64, parallel="tp=4,cp=2,pp=4,vp=5", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True, ring_context=True),
    dict(match=('GPT3-175B (NeMo 25.02)',), model="gpt-3-175b.json", target="nvidia-b200-512", seq=2048, batch=2,
         micro_batches=32, chips=512, parallel="tp=4,pp=4,vp=6", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('Llama3-8B (NeMo 25.02)',), model="llama-3.1-8b.json", target="nvidia-b200-8", seq=8192, batch=2,
         micro_batches=8, chips=8, parallel="data=8", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
    dict(match=('Llama3-70B (NeMo 25.02)',), model="llama-3.1-70b.json", target="nvidia-b200-64", seq=8192, batch=1,
         micro_batches=32, chips=64, parallel="tp=2,cp=2,pp=4,vp=5", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True, ring_context=True),
    dict(match=('Llama3-405B (NeMo 25.02)',), model="llama-3.1-405b.json", target="nvidia-b200-128", seq=8192, batch=1,
         micro_batches=32, chips=128, parallel="tp=4,cp=2,pp=8,vp=8", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True, ring_context=True),
    dict(match=('Mixtral-8x7B (NeMo 25.02)',), model="mixtral-8x7b.json", target="nvidia-b200-64", seq=4096, batch=2,
         micro_batches=2, chips=64, parallel="ep=8", remat="none",
         precision="fp8", per="tokens/chip", distributed_optimizer=True),
]


def row_matches(row, spec):
    text = " ".join(row.values())
    return all(m in text for m in spec["match"]) and row["model"].startswith(spec["match"][0])


# Spec keys that become `estimate` options: a value option (the key's value, or a default where
# the spec may leave it out) or a flag (when the key is true). Options that come in pairs (the
# slices and how they share the step, the parallelism and its remat) go together.
VALUE_OPTIONS = (("seq", "--seq"), ("moe_capacity_factor", "--moe-capacity-factor"),
                 ("micro_batches", "--micro-batches"), ("vocab_tiles", "--vocab-tiles"),
                 ("runtime", "--runtime"))
FLAG_OPTIONS = (("distributed_optimizer", "--distributed-optimizer"),
                ("dedup_expert_dispatch", "--dedup-expert-dispatch"),
                ("overlap_expert_comm", "--overlap-expert-comm"),
                ("ring_context", "--ring-context"),
                ("keep_attention_output", "--keep-attention-output"),
                ("channels_last", "--channels-last"))


# The same for a serving spec's `estimate --serve` options.
SERVE_VALUE_OPTIONS = (("kv_cache_dtype", "--kv-cache-dtype"),
                       ("kv_cache_length", "--kv-cache-length"), ("parallel", "--parallel"),
                       ("requests", "--requests"))
SERVE_FLAG_OPTIONS = (("kv_reads_per_query_head", "--kv-reads-per-query-head"),
                      ("bucketed_prefill", "--bucketed-prefill"),
                      ("replicated_prefill", "--replicated-prefill"))


def spec_options(spec, value_options, flag_options):
    """The value and flag options of those tables that `spec` sets."""
    flags = []
    for key, option in value_options:
        if key in spec:
            flags += [option, str(spec[key])]
    return flags + [option for key, option in flag_options if spec.get(key)]


def training_flags(spec):
    """The `estimate --train` options a training spec sets."""
    flags = spec_options(spec, VALUE_OPTIONS, FLAG_OPTIONS)
    if "lora" in spec:
        flags += ["--lora", str(spec["lora"]), "--lora-targets", spec.get("lora_targets", "all")]
    if "slices" in spec:
        flags += ["--slices", str(spec["slices"]), "--dcn", spec.get("dcn", "data")]
    if "parallel" in spec:
        flags += ["--parallel", spec["parallel"], "--remat", spec["remat"]]
    return flags


def run_estimate(cmd):
    """The first estimate of a `tpu-doctor estimate ... --format json` run."""
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    return json.loads(out)["estimates"][0]


def predict(binary, spec, calibration=None):
    model = spec["model"] if os.path.isabs(spec["model"]) else os.path.join(CONFIGS, spec["model"])
    if spec["per"] in ("serve", "serve_per_chip"):
        prompt, output, concurrency = spec["serve"]

        def serve(concurrency):
            cmd = [binary, "estimate", model, "--serve", "--prompt-tokens", str(prompt),
                   "--output-tokens", str(output), "--concurrency", str(concurrency),
                   "--targets", spec["target"], "--format", "json",
                   "--precision", spec.get("precision", "bf16")]
            return run_estimate(cmd + spec_options(spec, SERVE_VALUE_OPTIONS, SERVE_FLAG_OPTIONS))

        e = serve(concurrency)
        # A server capped at `concurrency` sequences runs no more than its KV cache holds.
        if spec.get("max_seqs") and 0 < e["serving"]["max_concurrency"] < concurrency:
            e = serve(e["serving"]["max_concurrency"])
        e["fits"] = e["serving"]["fits"]
        if spec["per"] == "serve_per_chip":
            return e["serving"]["output_tokens_per_s_per_chip"], e
        return e["serving"]["output_tokens_per_s"], e
    cmd = [binary, "estimate", model, "--targets", spec["target"], "--batch",
           str(spec["batch"]), "--format", "json",
           "--precision", spec.get("precision", "bf16")]
    if not spec.get("inference"):
        cmd.append("--train")
    cmd += training_flags(spec)
    if calibration:
        cmd += ["--calibration", calibration]
    e = run_estimate(cmd)
    step_s = e["step_time_ms"] / 1e3
    if spec["per"] == "tokens/chip":
        return e["global_batch"] * spec["seq"] / step_s / spec["chips"], e
    if spec["per"] == "mfu":
        return e["mfu"] * 100, e
    if spec["per"] == "tflops/chip":
        return e["model_flops_per_step"] / step_s / spec["chips"] / 1e12, e
    return e["samples_per_s"], e


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--binary", default=os.path.join(ROOT, "build", "tpu-doctor"))
    ap.add_argument("--csv", default=os.path.join(ROOT, "bench", "data", "published_results.csv"))
    args = ap.parse_args()
    rows = list(csv.DictReader(open(args.csv)))
    errors = []
    serving_errors = []
    not_fitting = []
    print(f"{'model':<26} {'hardware':<28} {'published':>11} {'predicted':>11}  error  unit")
    for row in rows:
        spec = next((s for s in ROWS if row_matches(row, s)), None)
        label = (row["model"][:26], row["hardware"][:28])
        if spec is None:
            print(f"{label[0]:<26} {label[1]:<28} {row['throughput']:>11}  skipped: no buildable "
                  f"model or not a throughput ({row['unit']})")
            continue
        published = float(row["throughput"].replace(",", ""))
        predicted, e = predict(args.binary, spec)
        err = predicted / published - 1
        errors.append(abs(err))
        if spec["per"] in ("serve", "serve_per_chip"):
            serving_errors.append(abs(err))
        if not e["fits"]:
            not_fitting.append(label)
        print(f"{label[0]:<26} {label[1]:<28} {published:>11.1f} {predicted:>11.1f} {err:+6.0%}  "
              f"{row['unit']}" + ("" if e["fits"] else "  (called 'does not fit')"))
    if not errors:
        sys.exit("no rows predicted")
    print(f"\n{len(errors)} rows predicted; median absolute error {statistics.median(errors):.1%}, "
          f"within 25%: {sum(e <= 0.25 for e in errors)}/{len(errors)}; published runs called "
          f"'does not fit': {len(not_fitting)}")
    if serving_errors:
        print(f"of them serving: {len(serving_errors)} rows, median absolute error "
              f"{statistics.median(serving_errors):.1%}, within 30%: "
              f"{sum(e <= 0.30 for e in serving_errors)}/{len(serving_errors)}")


if __name__ == "__main__":
    main()

#!/usr/bin/env python3
"""Random model configs through `tpu-doctor estimate`: hostile values in the keys that decide a
transformer's shape (latent attention, shared and routed experts, dense layers, windows, chunks,
Gemma 4's global heads) and the parallel axes (pipeline stages, micro-batches, expert dispatch
and the distributed optimizer too), in Hugging Face JSON and MaxText YAML alike.

Every run must end with exit 0, 1 or 2 within 30 s, and an exit 2 with exactly one line on stderr.
Under a sanitizer build pass B=that binary and ASAN_OPTIONS=exitcode=99 so its reports count.

    python3 bench/config_fuzz.py [SEED] [RUNS]      # B=build/tpu-doctor by default
"""
import json
import os
import random
import subprocess
import sys
import tempfile

BINARY = os.environ.get("B", "build/tpu-doctor")
VALUES = [0, 1, 2, 3, -1, -5, 7, 64, 128, 512, 1024, 8192, 2**24, 2**24 + 1, 2**31, 2**40, 1e300,
          0.5, None, "x", [], {}, True]
HF_KEYS = ["hidden_size", "num_hidden_layers", "num_attention_heads", "num_key_value_heads",
           "intermediate_size", "vocab_size", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim",
           "qk_rope_head_dim", "v_head_dim", "n_shared_experts", "n_routed_experts",
           "num_experts_per_tok", "first_k_dense_replace", "moe_layer_freq",
           "moe_intermediate_size", "attention_chunk_size", "no_rope_layer_interval",
           "sliding_window", "head_dim", "num_local_experts"]
MAXTEXT_KEYS = ["base_emb_dim", "base_num_decoder_layers", "base_num_query_heads",
                "base_num_kv_heads", "base_mlp_dim", "base_moe_mlp_dim", "vocab_size",
                "num_experts", "num_experts_per_tok", "shared_experts", "first_num_dense_layers",
                "interleave_moe_layer_step", "kv_lora_rank", "q_lora_rank", "qk_nope_head_dim",
                "qk_rope_head_dim", "v_head_dim", "sliding_window_size", "global_head_dim",
                "global_num_kv_heads", "chunk_attn_window_size", "nope_layer_interval", "head_dim"]


def hf_config(rng):
    cfg = {"model_type": rng.choice(["deepseek_v3", "gpt_oss", "llama4_text", "llama",
                                     "gemma3_text", "qwen3_moe", "falcon", "phi", "starcoder2"]),
           "hidden_size": 64, "num_hidden_layers": 4, "num_attention_heads": 4,
           "intermediate_size": 128, "vocab_size": 100}
    for k in rng.sample(HF_KEYS, rng.randint(1, 8)):
        cfg[k] = rng.choice(VALUES)
    if rng.random() < 0.3:
        cfg["no_rope_layers"] = [rng.choice(VALUES) for _ in range(rng.randint(0, 6))]
    if rng.random() < 0.3:
        cfg["layer_types"] = [rng.choice(["sliding_attention", "full_attention", 3])
                              for _ in range(4)]
    return "config.json", json.dumps(cfg)


def maxtext_config(rng):
    cfg = {"base_emb_dim": 64, "base_num_decoder_layers": 4, "base_num_query_heads": 4,
           "base_mlp_dim": 128, "vocab_size": 100,
           "decoder_block": rng.choice(["deepseek", "gpt_oss", "gemma2", "gemma3", "gemma4",
                                        "llama4", "mixtral"])}
    if rng.random() < 0.5:
        cfg["attention_type"] = "mla"
    for k in rng.sample(MAXTEXT_KEYS, rng.randint(1, 8)):
        cfg[k] = rng.choice(VALUES)
    return "model.yml", "".join(f"{k}: {json.dumps(v)}\n" for k, v in cfg.items())


def command(rng, path):
    if rng.random() < 0.3:
        serve = [BINARY, "estimate", path, "--serve", "--prompt-tokens",
                 str(rng.choice([1, 64, 1000])), "--output-tokens", "16", "--concurrency",
                 str(rng.choice([1, 4, 1024])), "--targets", "tpu7x-8"]
        if rng.random() < 0.5:
            serve += ["--kv-reads-per-query-head"]
        if rng.random() < 0.5:  # a fixed-shape engine: static cache, bucketed prefills
            serve += ["--kv-cache-length", str(rng.choice([1, 48, 2048, 1 << 24])),
                      "--bucketed-prefill"]
        if rng.random() < 0.3:
            serve += ["--parallel", "data=4", "--replicated-prefill"]
        elif rng.random() < 0.3:  # expert parallel serving (data-parallel attention)
            serve += ["--parallel", rng.choice(["ep=2", "ep=8", "tp=2,ep=4", "data=2,ep=4"])]
        if rng.random() < 0.3:
            serve += ["--kv-cache-dtype", rng.choice(["fp8", "int8"])]
        if rng.random() < 0.3:  # an offline job, its last wave smaller, or all in one
            serve += ["--requests", str(rng.choice([1, 3, 1000, 1 << 30]))]
        return serve
    args = [BINARY, "estimate", path, "--train", "--seq", str(rng.choice([16, 64, 1000])),
            "--batch", "2", "--targets", "tpu7x-8"]
    if rng.random() < 0.3:
        args += ["--parallel", rng.choice(["cp=2", "fsdp=4,cp=4", "cp=16", "ep=2,cp=2", "pp=2",
                                           "pp=4,vp=2", "tp=2,pp=8", "pp=16,vp=4", "cp=2,pp=2"])]
    if rng.random() < 0.2:
        args += ["--micro-batches", str(rng.choice([1, 3, 64, 1 << 20]))]
    if rng.random() < 0.2:
        args += ["--distributed-optimizer"]
    if rng.random() < 0.2:
        args += ["--parallel", rng.choice(["ep=2", "ep=8", "ep=4,pp=2", "ep=64"])]
        args += rng.sample(["--dedup-expert-dispatch", "--overlap-expert-comm"], rng.randint(0, 2))
    if rng.random() < 0.2:
        args += ["--remat", rng.choice(["none", "dots", "layer", "offload", "save_dot_except_mlpwi"])]
        args += rng.sample(["--ring-context", "--keep-attention-output"], rng.randint(0, 2))
    if rng.random() < 0.1:
        args += ["--vocab-tiles", str(rng.choice([1, 4, 65536, 0]))]
    if rng.random() < 0.1:
        args += ["--precision", rng.choice(["int8", "fp8"])]
    if rng.random() < 0.15:
        args += ["--lora", str(rng.choice([1, 16, 65536])),
                 "--lora-targets", rng.choice(["all", "attention", "qkv"])]
    return args


def main():
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    runs = int(sys.argv[2]) if len(sys.argv) > 2 else 300
    rng = random.Random(seed)
    bad = 0
    with tempfile.TemporaryDirectory() as tmp:
        for _ in range(runs):
            name, text = (hf_config if rng.random() < 0.5 else maxtext_config)(rng)
            path = os.path.join(tmp, name)
            with open(path, "w") as f:
                f.write(text)
            args = command(rng, path)
            try:
                r = subprocess.run(args, capture_output=True, text=True, timeout=30)
            except subprocess.TimeoutExpired:
                print("timeout:", text, args[3:])
                bad += 1
                continue
            if r.returncode not in (0, 1, 2) or (r.returncode == 2 and r.stderr.count("\n") != 1):
                print("exit", r.returncode, repr(r.stderr[-300:]), text, args[3:])
                bad += 1
    print(f"{runs} configs, {bad} failed")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())

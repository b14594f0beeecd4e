#!/usr/bin/env python3
"""Writes a large synthetic TPU training log: realistic noise (step lines, XLA/TF/JAX INFO and
WARNING lines, tracebacks of handled errors, lines that mention memory or hbm without being
failures) with a few real failure lines sprinkled in.  Usage: gen_noise_log.py SIZE_MB OUT
"""
import random
import sys

rng = random.Random(11)
NOISE = [
    "I{d} {t} {pid} train.py:{n}] step {s} loss={f:.4f} lr={g:.6f} tokens/s={n}\n",
    "INFO:tensorflow:global_step/sec: {f:.4f}\n",
    "INFO:absl:[{s}] train/loss={f:.5f}, train/accuracy={g:.4f}, learning_rate={g:.6f}\n",
    "W{d} {t} {pid} pjrt_client.cc:{n}] Memory usage after step {s}: {f:.2f}G of 31.25G hbm in use\n",
    "I{d} {t} {pid} checkpoint_manager.py:{n}] Saving checkpoint for step {s} to gs://bucket/run/ckpt-{s}\n",
    "2024-05-0{k} {t} - root - INFO - Epoch {k} batch {s}/{n} throughput {f:.1f} examples/s, host memory {g:.2f} GB\n",
    "WARNING:root:The TPU profiler is not enabled; step time {f:.3f}s\n",
    "  File \"/usr/local/lib/python3.10/site-packages/jax/_src/pjit.py\", line {n}, in _pjit_call_impl\n",
    "I{d} {t} {pid} xla_bridge.py:{n}] Compiled jit(train_step) in {f:.2f}s; cache hit={k}\n",
    "[{t}] rank {k}: data loader queue depth {n}, prefetch buffer {s}\n",
]
FAILURES = [
    "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: XLA:TPU compile permanent error. Ran out of memory in memory space hbm. Used 40.10G of 31.25G hbm.\n",
    "W0101 00:00:00 1 grpc.cc:157] RPC failed with status = \"Unavailable: Socket closed\"\n",
]


def line():
    return rng.choice(NOISE).format(d="0311", t=f"10:{rng.randrange(60):02d}:{rng.randrange(60):02d}.{rng.randrange(10**6):06d}",
                                    pid=rng.randrange(100, 9999), n=rng.randrange(10, 99999), s=rng.randrange(1, 10**6),
                                    f=rng.random() * 10, g=rng.random(), k=rng.randrange(1, 9))


def main():
    size, out = int(sys.argv[1]) << 20, sys.argv[2]
    block = "".join(line() for _ in range(60000))  # ~6 MB of distinct lines, repeated
    written = 0
    with open(out, "w") as f:
        while written < size:
            f.write(block)
            written += len(block)
            if rng.random() < 0.05:
                f.write(rng.choice(FAILURES))


if __name__ == "__main__":
    main()

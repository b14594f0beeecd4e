# A benchmark sweeping sizes the code lists: each iteration builds arrays of new shapes, so each
# compiles a program of its own whatever is jitted; a jit made once before the loop would compile
# on every iteration too.
import time

import jax
import jax.numpy as jnp


def timed(fn, runs=10):
    jax.block_until_ready(fn())
    start = time.perf_counter()
    for _ in range(runs):
        jax.block_until_ready(fn())
    return (time.perf_counter() - start) / runs


for gb in (1, 2, 4):
    n = int(gb * 1e9 / 2)
    x = jnp.ones((n,), dtype=jnp.bfloat16)
    total = jax.jit(lambda a: jnp.sum(a, dtype=jnp.float32))
    print(gb, timed(lambda: total(x)))

for i, (batch, length) in enumerate(((32, 4096), (64, 8192))):
    q = jnp.zeros((batch, 1, 128))
    k = jnp.zeros((batch, length, 128))
    score = jax.jit(lambda a, b: jnp.einsum("bqd,bkd->bqk", a, b))
    print(i, timed(lambda: score(q, k)))

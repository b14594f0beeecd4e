# A benchmark sweep over listed sizes, its inputs made by a helper of the file from the size
# (EasyDeL's packed-prefill benchmark): every iteration's program has new shapes, so it compiles
# on every iteration however it is jitted.
import jax
import jax.numpy as jnp


def make_inputs(bucket, num_slots):
    key = jax.random.key(bucket)
    return {"x": jax.random.normal(key, (num_slots, bucket, 128), dtype=jnp.float32)}


def kernel(x):
    return jnp.tanh(x).sum()


buckets = (512, 2048)
for bucket in buckets:
    inputs = make_inputs(bucket, num_slots=32)
    fn = jax.jit(lambda: kernel(**inputs))
    fn().block_until_ready()

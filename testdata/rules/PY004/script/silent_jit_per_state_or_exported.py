# Two loops that make a program per iteration on purpose. Allocating per-layer caches: the jit's
# out_shardings read a sharding the loop computes for each state, so every iteration asks for a
# different program. Exporting one artifact per input signature: the jitted function is only
# given to jax.export, never called, so each iteration compiles it once, ahead of time.
import functools

import jax
import jax.numpy as jnp
from jax import export as jax_export
from jax.sharding import NamedSharding, PartitionSpec


def allocate(mesh, shapes):
    states = []
    for index, shape in enumerate(shapes):
        spec = PartitionSpec("data") if index == 0 else PartitionSpec(None, "model")
        sharding = NamedSharding(mesh, spec)

        def zeros(s=shape):
            return jnp.zeros(s, jnp.bfloat16)

        states.append(jax.jit(zeros, out_shardings=sharding)())
    return states


def export_all(fn, signatures):
    artifacts = {}
    for sig in signatures:
        args = tuple(jax.ShapeDtypeStruct(a["shape"], a["dtype"]) for a in sig["args"])
        bound = functools.partial(fn, **sig["features"])
        target = jax.jit(lambda *x: bound(*x).sum())
        artifacts[sig["name"]] = jax_export.export(target)(*args).serialize()
    return artifacts

# Under equinox.filter_jit an argument annotated as an array is traced like any jax.jit argument:
# `if` on its value cannot be decided while tracing.
import equinox as eqx
import jax


@eqx.filter_jit
def clip(x: jax.Array, limit: float):
    if x > limit:
        return limit
    return x

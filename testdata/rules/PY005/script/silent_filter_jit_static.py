# equinox.filter_jit traces only the arguments that are arrays when called; a Python int, a
# string or a flag is held static, so Python control flow on it runs at trace time.
import equinox as eqx
import jax.numpy as jnp


@eqx.filter_jit(donate="all")
def free_pages(table, seq_id: int, verbose=False):
    if seq_id < 0:
        return table
    if verbose:
        print("freeing", seq_id)
    return table.at[seq_id].set(0)


def step(model, x, training):
    if training:
        return model(x)
    return jnp.zeros_like(x)


fast_step = eqx.filter_jit(step)

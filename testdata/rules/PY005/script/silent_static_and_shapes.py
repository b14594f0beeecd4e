import functools

import jax
import jax.numpy as jnp


@functools.partial(jax.jit, static_argnames=("training",))
def apply(x, training):
    if training:
        x = x * 0.9
    if x.shape[0] > 1:
        x = x[1:]
    return x


@jax.jit
def step(params, mask=None):
    if mask is None:
        return params
    return jnp.where(mask, params, 0.0)


def eager(x):
    if x > 0:  # not jitted: Python sees the value
        return x
    return -x


# jax.jit called on the function, its flag static by position (big_vision's evaluators).
def count_correct(state, return_embeddings, *, image):
    correct = jnp.sum(state * image)
    if return_embeddings:
        return correct, image
    return correct, None


count_correct_p = jax.jit(count_correct, static_argnums=(1,))


@jax.jit
def reshape_if_needed(x, model):
    # Shapes and ranks are static; a module's attribute may be a Python flag.
    if jnp.ndim(x) > 1 and x.ndim == 2 and len(x) > 0:
        x = x.reshape(-1)
    if model.training:
        x = x * 2
    return x

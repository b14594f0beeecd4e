import functools

import jax
import jax.numpy as jnp


def update(params, grads, num_classes):
    return params - 0.1 * grads[:num_classes]


params = jnp.ones(8)
num_classes, need_compile = 4, True
for step in range(1000):
    # Compiled again only when the configuration changed, not on every step.
    if need_compile:
        update_jit = jax.jit(functools.partial(update, num_classes=num_classes))
        need_compile = False
    params = update_jit(params, jnp.ones(8))
    if step % 100 == 99:
        num_classes, need_compile = num_classes + 1, True

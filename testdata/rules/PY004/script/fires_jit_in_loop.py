import jax
import jax.numpy as jnp

params = jnp.ones(4)
for lr in [0.1, 0.01]:
    update = jax.jit(lambda p, g: p - lr * g)
    params = update(params, jnp.ones(4))

    def scaled(p):
        return p * lr

    params = jax.jit(scaled)(params)

from functools import partial


def body(i, step):
    return i + step


i = 0
while i < 10:
    # A new partial object each iteration, given to jit there or through a name.
    i = jax.jit(partial(body, step=1))(i)
    add_two = partial(body, step=2)
    i = jax.jit(add_two)(i)
    # The same function object every time: compiled once.
    i = jax.jit(body, static_argnums=1)(i, 1)

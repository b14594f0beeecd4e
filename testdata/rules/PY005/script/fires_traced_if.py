import jax
import jax.numpy as jnp


@jax.jit
def train_step(params, batch, step):
    if step > 1000:
        params = params * 0.5
    while batch[0] < 0:
        batch = batch + 1
    return params


def loss_fn(x, training):
    if training:
        x = x * 0.9
    return x


loss = jax.jit(loss_fn)


@jax.jit
def clip_step(grads, loss):
    # Values computed from traced arrays are traced too.
    if jnp.any(jnp.isnan(grads)):
        grads = jnp.zeros_like(grads)
    if loss.item() > 10.0 or grads.sum() + 1 < 0:
        grads = grads * 0.1
    return grads

# A sweep over listed values whose helper makes arrays of one fixed shape: jitting one function
# that takes the value as an argument compiles once, the lambda made in the loop compiles on
# every iteration.
import jax
import jax.numpy as jnp


def make_inputs(scale):
    return {"x": scale * jnp.ones((32, 128))}


def kernel(x):
    return jnp.tanh(x).sum()


scales = (0.5, 1.0, 2.0)
for scale in scales:
    inputs = make_inputs(scale)
    fn = jax.jit(lambda: kernel(**inputs))
    fn()

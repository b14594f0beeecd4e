# A def nested in the function that jits it is the one a bare name there refers to, even when a
# module-level def has the same name.
import jax


def step(x):
    return x * 2


def main(threshold):
    def step(x):
        if x.sum() > threshold:
            return x
        return -x

    fast = jax.jit(step)
    return fast

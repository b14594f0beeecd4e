# Stacking each group of unrolled layers back into a scanned one: the jit is made in the loop, but
# its out_shardings read the loop's own variable, so every iteration asks for a different program
# (other shapes, other shardings). A function made once would compile once per group too.
import jax
import jax.numpy as jnp


def rescan(decoder, shardings, groups, axis):
    for layer_name, num_layers in groups:

        def stack_layers(*layers):
            return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs, axis=axis), *layers)

        stack = jax.jit(stack_layers, out_shardings=shardings[layer_name])
        decoder[layer_name] = stack(*[decoder.pop(f"{layer_name}_{i}") for i in range(num_layers)])
    return decoder

# JAX training skeleton: v5litepod-32 (4x8), fsdp=8,tp=4, remat none, global batch 8 (planned by tpu-doctor for examples/configs/llama-3.1-8b.json)
# Mesh axes (data, fsdp, tensor) = (1, 8, 4); remat: none.
import argparse

import jax
import jax.numpy as jnp
import numpy as np
import optax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_batch", type=float, default=0.25)
parser.add_argument("--global_batch", type=int, default=8)
parser.add_argument("--ici_fsdp_parallelism", type=int, default=8)
parser.add_argument("--ici_tensor_parallelism", type=int, default=4)
parser.add_argument("--remat", default="none", choices=["none", "dots", "layer", "offload"])
args = parser.parse_args()

jax.distributed.initialize()  # one process per host; a no-op on a single host
assert jax.device_count() == 32, f"expected 32 chips, found {jax.device_count()}"
fsdp, tensor = args.ici_fsdp_parallelism, args.ici_tensor_parallelism
data = jax.device_count() // (fsdp * tensor)
mesh = Mesh(np.array(jax.devices()).reshape(data, fsdp, tensor), ("data", "fsdp", "tensor"))

# The batch is split over the data and FSDP axes; every step has the same static shape.
batch_sharding = NamedSharding(mesh, P(("data", "fsdp")))
# Parameters: the first dim of each weight over FSDP, the last over tensor parallelism.
def param_sharding(x):
    if x.ndim >= 2:
        return NamedSharding(mesh, P("fsdp", *([None] * (x.ndim - 2)), "tensor"))
    return NamedSharding(mesh, P())

def model_apply(params, batch):
    raise NotImplementedError("call your model here (flax.linen / nnx / equinox)")

def loss_fn(params, batch):
    return model_apply(params, batch)

# No rematerialisation: the plan fits with every activation kept.
if args.remat == "dots":
    loss_fn = jax.checkpoint(loss_fn, policy=jax.checkpoint_policies.checkpoint_dots)
optimizer = optax.adamw(3e-4)

@jax.jit
def train_step(params, opt_state, batch):
    loss, grads = jax.value_and_grad(loss_fn)(params, batch)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss

def shard_params(params):
    return jax.tree.map(lambda x: jax.device_put(x, param_sharding(x)), params)

def shard_batch(host_batch):
    # Each host feeds its share: global_batch / process_count samples, bf16 inputs.
    return jax.make_array_from_process_local_data(batch_sharding, host_batch)

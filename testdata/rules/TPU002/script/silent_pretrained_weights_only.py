import jax
import jax.numpy as jnp
import torch
import torch_xla.core.xla_model as xm
from transformers import AutoModelForCausalLM

# Loaded in float16 on the host only to convert its weights: the TPU computes in the dtype the
# converted parameters are given.
torch_model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
state_dict = torch_model.state_dict()
params = jax.tree_util.tree_map(lambda x: jnp.asarray(x.float().numpy(), jnp.bfloat16), state_dict)

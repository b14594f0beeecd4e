import jax.numpy as jnp
import torch
import torch_xla.core.xla_model as xm
from transformers import AutoModelForCausalLM, FlaxAutoModelForCausalLM

device = xm.xla_device()
model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16).to(device)
flax_model = FlaxAutoModelForCausalLM.from_pretrained("gpt2", dtype=jnp.float16)
logits = flax_model(jnp.ones((1, 8), jnp.int32)).logits

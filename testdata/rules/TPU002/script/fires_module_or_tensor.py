# What a float16 dtype decides depends on what it is given to. A module converted, a layer's
# dtype= and an autocast region set what the model computes in: warnings. A tensor made or
# converted to float16 is cast by the layers that read it (Keras casts inputs, Flax and jax.numpy
# promote to the weights' type): a note when it reaches a model, nothing when it does not.
import jax.numpy as jnp
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(8, 8)

    def forward(self, x):
        return self.fc(x)


net = Net().to("xla").half()
head = nn.Linear(8, 2, dtype=torch.float16)

with torch.autocast("xla", dtype=torch.float16):
    out = net(torch.ones(2, 8))


def encode_images(images, vae_encode):
    stacked = jnp.stack(images, axis=0, dtype=jnp.float16)
    return vae_encode(stacked)


batch = torch.randn(4, 8).half()
logits = head(batch)
shown = torch.randn(4, 8).half()
print(shown.dtype)

# A CUDA autocast region: a TPU run does not enter it.
with torch.autocast("cuda", dtype=torch.float16):
    gpu_out = net(torch.ones(2, 8))

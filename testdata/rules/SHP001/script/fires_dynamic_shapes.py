import functools

import jax
import jax.numpy as jnp
import torch
import torch_xla.core.xla_model as xm


@jax.jit
def positives(x):
    idx = jnp.nonzero(x > 0)
    return x[idx]


@functools.partial(jax.jit, static_argnums=1)
def uniq(x, n):
    return jnp.unique(x)


class Router(torch.nn.Module):
    def forward(self, scores):
        chosen = torch.nonzero(scores > 0.5)
        return chosen

    def masked_mean(self, logits, labels):
        # Boolean-mask indexing keeps as many elements as the values say.
        return logits[labels != -100].mean()


device = xm.xla_device()
for batch, labels in loader:
    out = model(batch.to(device))
    hits = torch.nonzero(out.argmax(-1) == labels)
    loss = out[~(labels < 0)].sum()
    loss.backward()
    xm.optimizer_step(optimizer)

import jax
import jax.numpy as jnp
import pandas as pd
import torch
import torch_xla.core.xla_model as xm


@jax.jit
def positives(x):
    idx = jnp.nonzero(x > 0, size=16, fill_value=0)
    return jnp.where(x > 0, x, 0.0)


def eager(x):
    # Outside jit, JAX computes it eagerly: fine.
    return jnp.unique(x)


labels = pd.read_csv("train.csv")["label"].unique()


class Dataset(torch.utils.data.Dataset):
    def __getitem__(self, i):
        # Host-side preparation may size things as it likes.
        return torch.nonzero(torch.arange(8) > i)


class Clamp(torch.nn.Module):
    def forward(self, x):
        # Assigning through a mask keeps the shape (a select); shapes compared are Python values.
        x[x < 0] = 0
        if x[x.shape[0] > 1]:
            pass
        return x[:, 0] * (x[:, 1] > 0)


# Host-side statistics before training: not in a step loop.
train_labels = torch.tensor(all_labels)
positives_only = train_labels[train_labels > 0]

# Random indices drawn on the host: torch factories without device= make CPU tensors, so their
# .item() is a plain Python read, not a torch_xla sync.
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer, trajectories):
    device = xm.xla_device()
    for batch in loader:
        t = torch.randint(0, len(trajectories), (1,)).item()
        noise_level = torch.rand(1)
        scale = noise_level.item()
        loss = model(batch.to(device), t, scale)
        loss.backward()
        xm.optimizer_step(optimizer)

# A factory told to allocate on the XLA device makes a device tensor: reading it every step waits
# for the device.
import torch
import torch_xla.core.xla_model as xm


def train(model, loader, optimizer):
    device = xm.xla_device()
    for batch in loader:
        loss = model(batch.to(device))
        loss.backward()
        xm.optimizer_step(optimizer)
        step_noise = torch.rand(1, device=device).item()

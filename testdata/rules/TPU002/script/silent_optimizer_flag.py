import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()
model = torch.nn.Linear(16, 4).to(device)
optimizer = torch.optim.AdamW(model.parameters())
# An overflow flag the optimizer's step reads: a float64 scalar that no layer computes with.
found_inf = torch.tensor(0, dtype=torch.double, device=device)
for x in torch.randn(8, 16, 16):
    loss = model(x.to(device)).sum()
    loss.backward()
    optimizer.step(found_inf=found_inf)
    xm.mark_step()

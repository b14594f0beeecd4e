# An evaluation loader that shuffles (its sampler does) is still an evaluation loader: its batches
# are only looked at, in a loop that takes no training step, so dropping the last one would change
# the metric. The training loader beside it drops its last batch.
import torch
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
from torch.utils.data import DataLoader, DistributedSampler


def evaluate(model, train_dataset, eval_dataset, optimizer, device):
    train_loader = DataLoader(train_dataset, batch_size=32, shuffle=True, drop_last=True)
    for x, y in pl.MpDeviceLoader(train_loader, device):
        loss = model(x, y)
        loss.backward()
        xm.optimizer_step(optimizer)

    eval_sampler = DistributedSampler(eval_dataset, num_replicas=xm.xrt_world_size(),
                                      rank=xm.get_ordinal(), shuffle=True, seed=42)
    eval_loader = DataLoader(eval_dataset, batch_size=32, sampler=eval_sampler)
    eval_loader = pl.ParallelLoader(eval_loader, [device]).per_device_loader(device)
    total = 0
    model.eval()
    with torch.no_grad():
        for batch in eval_loader:
            total += model(*batch).sum()
    return total

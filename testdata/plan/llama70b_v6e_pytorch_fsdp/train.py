# PyTorch/XLA training skeleton: v6e-256 (16x16), fsdp=64,tp=4, remat none, global batch 128 (planned by tpu-doctor for examples/configs/llama-3.1-70b.json)
# PJRT runtime: one process per TPU device, started by xmp.spawn without nprocs.
import argparse
import os

os.environ.setdefault("PJRT_DEVICE", "TPU")

import torch
import torch_xla
import torch_xla.core.xla_model as xm
import torch_xla.distributed.parallel_loader as pl
import torch_xla.distributed.xla_multiprocessing as xmp
import torch_xla.runtime as xr

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_batch", type=int, default=1)
parser.add_argument("--global_batch", type=int, default=128)
args, _ = parser.parse_known_args()  # the sharding flags are for the JAX skeleton


def build_model():
    raise NotImplementedError("construct your torch.nn.Module here")


def build_dataset():
    raise NotImplementedError("return your torch.utils.data.Dataset here")


def _mp_fn(index):
    device = torch_xla.device()
    world = xr.world_size()
    assert args.global_batch == args.per_device_batch * world, "global batch != per-device x devices"
    # The plan shards parameters (fsdp=64,tp=4): FSDP wraps every submodule of 100M+ parameters and moves each to the
    # device as it shards it; the whole model never sits on one chip.
    import functools
    from torch_xla.distributed.fsdp import XlaFullyShardedDataParallel as FSDP
    from torch_xla.distributed.fsdp.wrap import size_based_auto_wrap_policy
    policy = functools.partial(size_based_auto_wrap_policy, min_num_params=int(1e8))
    model = FSDP(build_model(), auto_wrap_policy=policy, compute_dtype=torch.bfloat16)
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-4)
    dataset = build_dataset()
    sampler = torch.utils.data.distributed.DistributedSampler(
        dataset, num_replicas=world, rank=xr.global_ordinal(), shuffle=True)
    # drop_last keeps every step's shape static: a smaller last batch would recompile.
    loader = torch.utils.data.DataLoader(
        dataset, batch_size=args.per_device_batch, sampler=sampler, drop_last=True, num_workers=4)
    for batch in pl.MpDeviceLoader(loader, device):
        optimizer.zero_grad()
        with torch.autocast("xla", dtype=torch.bfloat16):
            loss = model(*batch)
        loss.backward()
        optimizer.step()  # FSDP reduce-scattered the gradients already


if __name__ == "__main__":
    xmp.spawn(_mp_fn, args=())

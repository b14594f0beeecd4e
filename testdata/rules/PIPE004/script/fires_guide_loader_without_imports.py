# A TPU guide's snippet, pasted without its imports: DataLoader is torch's, as the guides import it.
import torch_xla.core.xla_model as xm


def train_dataloader(self):
    dataset = MNIST(os.getcwd(), train=True, download=True, transform=transforms.ToTensor())
    sampler = DistributedSampler(
        dataset, num_replicas=xm.xrt_world_size(), rank=xm.get_ordinal(), shuffle=True
    )
    return DataLoader(dataset, sampler=sampler, batch_size=32)

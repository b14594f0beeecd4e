# A shuffling loader handed to a trainer as its evaluation input (Composer's `eval_dataloader=`,
# as its TPU notebook does): dropping its last batch would lose test examples, so it is left
# alone; the training loader drops its partial batch.
import torch
import torch_xla.core.xla_model as xm
from composer import Trainer
from torchvision import datasets, transforms

batch_size = 1024
to_tensor = transforms.ToTensor()
train_set = datasets.CIFAR10("./data", train=True, download=True, transform=to_tensor)
test_set = datasets.CIFAR10("./data", train=False, download=True, transform=to_tensor)

train_dataloader = torch.utils.data.DataLoader(
    train_set, batch_size=batch_size, shuffle=True, drop_last=True
)
test_dataloader = torch.utils.data.DataLoader(test_set, batch_size=batch_size, shuffle=True)

trainer = Trainer(
    model=model,
    train_dataloader=train_dataloader,
    eval_dataloader=test_dataloader,
    device="tpu",
    max_duration="20ep",
)
trainer.fit()

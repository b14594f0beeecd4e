# A tokenizer the script receives rather than imports: its call's `return_tensors=` says it is
# Hugging Face's, and padding=True pads each batch to its own longest sequence.
import torch
import torch_xla.core.xla_model as xm

device = xm.xla_device()


def embed(models, loader):
    tokenizer, encoder = models
    with torch.no_grad():
        for batch in loader:
            inputs = tokenizer(text=batch["text"], padding=True, truncation=True,
                               return_tensors="pt")
            yield encoder(inputs["input_ids"].to(device))

import torch
import torch_xla.core.xla_model as xm
from transformers import AutoTokenizer, DataCollatorWithPadding

tokenizer = AutoTokenizer.from_pretrained("bert-base-uncased")


def encode(batch):
    return tokenizer(batch["text"], padding=True, truncation=True, max_length=128)


collator = DataCollatorWithPadding(tokenizer=tokenizer)


def serve(requests):
    # Texts that arrive at run time: each batch of requests pads to its own longest.
    return tokenizer([r.text for r in requests], return_tensors="pt", padding=True)

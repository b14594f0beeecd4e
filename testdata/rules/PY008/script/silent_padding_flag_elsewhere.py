# `padding=True` of a call that is not a Hugging Face tokenizer (no transformers import, no
# return_tensors=): the rule cannot tell what it pads, so it says nothing.
import torch_xla.core.xla_model as xm

from mylib import make_layer

layer = make_layer(width=128, padding=True)
device = xm.xla_device()

# A generation demo: two prompts written in the script are padded together once. One shape for
# the whole run, so nothing is compiled again (PY008 looks for padding applied batch by batch).
import torch
import torch_xla.core.xla_model as xm
from transformers import AutoModelForCausalLM, AutoTokenizer

device = xm.xla_device()
tokenizer = AutoTokenizer.from_pretrained("google/gemma-2b")
model = AutoModelForCausalLM.from_pretrained("google/gemma-2b").to(device)
prompts = ["Here is a short prompt:", "And here, a somewhat longer one:"]
inputs = tokenizer(prompts, return_tensors="pt", padding=True).to(device)
greeting = tokenizer("Hello", return_tensors="pt", padding="longest").to(device)
with torch.no_grad():
    out = model.generate(**inputs, max_new_tokens=20)

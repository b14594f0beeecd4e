# A text-to-image pipeline pads its prompt to the tokenizer's fixed length for the text encoder,
# then tokenizes it again with padding="longest" only to see whether the first call cut it, and
# to log what was cut. The second batch is inspected (its length compared, its ids compared and
# decoded), never given to a model: nothing compiles per length.
import torch
import torch_xla.core.xla_model as xm
from transformers import CLIPTextModel, CLIPTokenizer

tokenizer = CLIPTokenizer.from_pretrained("openai/clip-vit-large-patch14")
text_encoder = CLIPTextModel.from_pretrained("openai/clip-vit-large-patch14").to(xm.xla_device())


def encode_prompt(prompt, device):
    text_inputs = tokenizer(
        prompt, padding="max_length", max_length=tokenizer.model_max_length, truncation=True,
        return_tensors="pt",
    )
    text_input_ids = text_inputs.input_ids
    untruncated_ids = tokenizer(prompt, padding="longest", return_tensors="pt").input_ids
    if untruncated_ids.shape[-1] >= text_input_ids.shape[-1] and not torch.equal(
        text_input_ids, untruncated_ids
    ):
        removed_text = tokenizer.batch_decode(untruncated_ids[:, tokenizer.model_max_length - 1 : -1])
        print("truncated:", removed_text)
    full = tokenizer(prompt, padding=True, return_tensors="pt")["input_ids"]
    if full.shape[-1] > 77:
        for i in range(len(prompt)):
            tokens = full[i][75:]
            print(tokenizer.decode(tokens))
    return text_encoder(text_input_ids.to(device))[0]

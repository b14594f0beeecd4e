# The tokenizer pads to the batch's longest, but the ids, the mask and the positions made from it
# are padded again to a bucket the script chose before the model sees them: the step's shapes are
# the buckets'.
import jax
import jax.numpy as jnp
from transformers import AutoTokenizer

tokenizer = AutoTokenizer.from_pretrained("gpt2")
BUCKETS = (128, 256, 512, 1024)


def bucket(length):
    return next(b for b in BUCKETS if b >= length)


def prefill_inputs(prompts):
    inputs = tokenizer(prompts, return_tensors="np", padding=True)
    input_ids = inputs["input_ids"]
    positions = inputs["attention_mask"].cumsum(-1) - 1
    positions = jnp.where(inputs["attention_mask"] == 0, 1, positions)
    length = bucket(input_ids.shape[1])
    extra = ((0, 0), (0, length - input_ids.shape[1]))
    ids = jnp.pad(input_ids, extra, constant_values=tokenizer.eos_token_id)
    mask = jnp.pad(inputs["attention_mask"], extra)
    return ids, mask, jnp.pad(positions, extra)

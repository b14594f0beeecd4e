# interleave(lambda x: x) only flattens datasets made before it; these are in-memory shards of a
# replay buffer (no file is read), so there is nothing for parallel calls to overlap.
import tensorflow as tf

buffer = tf.data.Dataset.from_tensor_slices(tf.range(1024)).batch(8)
shards = tf.data.Dataset.range(4).map(lambda i: buffer.shard(4, i), num_parallel_calls=4)
flat = shards.interleave(lambda ds_: ds_)
for batch in flat.take(2):
    print(batch)

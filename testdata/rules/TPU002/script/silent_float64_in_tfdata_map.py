# float64 inside a function tf.data maps with: the pipeline runs on the host's CPU, and the value
# is narrowed to int32 before it leaves. Nothing reaches the TPU in float64.
import tensorflow as tf

lookup = tf.range(300, dtype=tf.int32)


def bucketize(features, elapsed_ms):
    limit = tf.cast(tf.reduce_max(lookup) * 60000, tf.float64)
    e = tf.clip_by_value(tf.cast(elapsed_ms, tf.float64), 0, limit)
    e = tf.gather(lookup, tf.cast(e / 60000, tf.int32))
    return features, e


ds = tf.data.Dataset.from_tensor_slices((tf.zeros([64, 8]), tf.zeros([64], tf.int64)))
ds = ds.map(bucketize, num_parallel_calls=tf.data.AUTOTUNE).batch(8, drop_remainder=True)
ds = ds.prefetch(tf.data.AUTOTUNE)

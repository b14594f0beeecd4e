# repeat(count=None) and repeat(-1) repeat forever, as repeat() does: every batch is full.
import tensorflow as tf

AUTOTUNE = tf.data.AUTOTUNE


def load_dataset(files, training=True):
    dataset = tf.data.TextLineDataset(files)
    if training:
        dataset = dataset.shuffle(1000).repeat(count=None)
    else:
        dataset = dataset.repeat(count=1)
    return dataset.batch(batch_size=32).prefetch(AUTOTUNE)


def load_forever(files):
    return tf.data.TextLineDataset(files).shuffle(1000).repeat(-1).batch(32).prefetch(AUTOTUNE)


model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.fit(load_dataset(["train.csv"]), steps_per_epoch=100, epochs=2)
model.fit(load_forever(["train.csv"]), steps_per_epoch=100)


# A library function whose repeat count defaults to -1: its callers get an endless repeat unless
# they pass one (tensorflow/similarity's TFRecordDatasetSampler).
def sampler(files, batch_size=32, num_repeat=-1):
    ds = tf.data.Dataset.from_tensor_slices(files).shuffle(len(files))
    ds = ds.interleave(tf.data.TFRecordDataset, num_parallel_calls=AUTOTUNE)
    ds = ds.repeat(count=num_repeat)
    return ds.batch(batch_size).prefetch(AUTOTUNE)

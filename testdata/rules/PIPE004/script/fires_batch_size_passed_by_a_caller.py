import tensorflow as tf


def assemble_dataset(paths, batch_size=1):
    dataset = tf.data.Dataset.from_tensor_slices(paths).shuffle(100)
    return dataset.batch(batch_size)


# One caller asks for batches of 32: the default no longer says what the batch is.
instances = assemble_dataset(["a.png", "b.png"])
classes = assemble_dataset(["c.png", "d.png", "e.png"], batch_size=32)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(tf.data.Dataset.zip((instances, classes)), epochs=2)

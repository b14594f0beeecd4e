import tensorflow as tf

AUTO = tf.data.AUTOTUNE


def assemble_dataset(paths, batch_size=1):
    dataset = tf.data.Dataset.from_tensor_slices(paths)
    dataset = dataset.shuffle(5, reshuffle_each_iteration=True)
    # Every caller below leaves batch_size at its default of 1: a batch of one is never partial.
    return dataset.batch(batch_size)


instances = assemble_dataset(["a.png", "b.png"])
classes = assemble_dataset(["c.png", "d.png", "e.png"])
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(tf.data.Dataset.zip((instances, classes)), epochs=2)

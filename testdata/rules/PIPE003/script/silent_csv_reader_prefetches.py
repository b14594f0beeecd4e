import tensorflow as tf

# make_csv_dataset batches, shuffles, repeats and prefetches (prefetch_buffer_size defaults to
# AUTOTUNE): a split of it by take/skip is prefetched already.
cars = tf.data.experimental.make_csv_dataset("gs://bucket/cars.csv", batch_size=32,
                                             label_name="class")
train = cars.take(800)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(train, epochs=3)

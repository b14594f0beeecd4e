import tensorflow as tf

# prefetch_buffer_size=0 turns the reader's own prefetch off.
cars = tf.data.experimental.make_csv_dataset("gs://bucket/cars.csv", batch_size=32,
                                             label_name="class", prefetch_buffer_size=0)
model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
model.compile("adam", "mse")
model.fit(cars.take(800), epochs=3)

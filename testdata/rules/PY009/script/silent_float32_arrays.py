# Arrays made float32 before tf.data sees them, a dataset built only to be printed, and Keras'
# fit(x=array), which casts NumPy floats to float32 on the host: nothing to report.
import numpy as np
import tensorflow as tf

strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())

(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
x_train = x_train.astype("float32") / 255.0
noise = np.random.rand(1024, 16).astype(np.float32)
zeros = np.zeros((1024,), dtype=np.float32)
ids = np.arange(1024)

train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(
    128, drop_remainder=True).prefetch(tf.data.AUTOTUNE)
aux_ds = tf.data.Dataset.from_tensor_slices((noise, zeros, ids)).batch(
    64, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

demo = tf.data.Dataset.from_tensor_slices(np.random.rand(4, 2))
for element in demo:
    print(element)

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    model.compile("adam", "sparse_categorical_crossentropy")
model.fit(train_ds, epochs=1)
model.fit(aux_ds, epochs=1)
model.fit(np.random.rand(64, 28, 28), np.zeros((64,)), epochs=1)

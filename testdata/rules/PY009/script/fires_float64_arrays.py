# The TensorFlow quickstart's data on a TPU, fed through tf.data: NumPy divides the uint8 images
# into float64, and np.random / np.zeros / float lists make float64 too.
import numpy as np
import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TPUClusterResolver()
tf.config.experimental_connect_to_cluster(resolver)
tf.tpu.experimental.initialize_tpu_system(resolver)
strategy = tf.distribute.TPUStrategy(resolver)

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0

train_ds = (tf.data.Dataset.from_tensor_slices((x_train, y_train))
            .shuffle(10000).batch(128, drop_remainder=True).prefetch(tf.data.AUTOTUNE))

features = np.random.rand(1024, 16)
weights = np.zeros((1024,))
scale = np.array([0.5, 1.5, 2.5])
aux_ds = tf.data.Dataset.from_tensor_slices(
    {"x": features.reshape(-1, 4, 4), "w": weights, "s": np.tile(scale, 1)}).batch(
        64, drop_remainder=True).prefetch(tf.data.AUTOTUNE)

images = tf.keras.datasets.cifar10.load_data()[0][0]


def make_dataset():
    pixels = images.reshape(-1, 3072) * 1.0
    return tf.data.Dataset.from_tensor_slices(pixels).batch(8, drop_remainder=True)


with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    model.compile("adam", "sparse_categorical_crossentropy")
model.fit(train_ds, epochs=1)
model.fit(aux_ds, epochs=1)

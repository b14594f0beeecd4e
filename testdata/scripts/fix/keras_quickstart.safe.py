# The TensorFlow quickstart moved to a TPU with tf.data: float64 images (PY009, an unsafe fix)
# and a batch without drop_remainder (PIPE004, a safe one).
import tensorflow as tf

strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())

(x_train, y_train), (x_test, y_test) = tf.keras.datasets.mnist.load_data()
x_train, x_test = x_train / 255.0, x_test / 255.0
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(10000).batch(128, drop_remainder=True)
train_ds = train_ds.prefetch(tf.data.AUTOTUNE)

with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(10)])
    model.compile("adam", "sparse_categorical_crossentropy")
model.fit(train_ds, epochs=1)

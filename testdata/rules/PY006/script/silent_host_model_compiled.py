import tensorflow as tf


def create_model():
    return tf.keras.Sequential([tf.keras.layers.Flatten(),
                                tf.keras.layers.Dense(10)])


resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
tf.config.experimental_connect_to_cluster(resolver)
tf.tpu.experimental.initialize_tpu_system(resolver)
strategy = tf.distribute.TPUStrategy(resolver)
with strategy.scope():
    tpu_model = create_model()
    tpu_model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

# A host model to compare with, compiled outside any scope and never trained: Keras checks a
# model's variables against the strategy only when it is compiled inside its scope.
cpu_model = create_model()
cpu_model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
print(cpu_model.summary())

(x, y), _ = tf.keras.datasets.mnist.load_data()
tpu_model.fit(x, y, batch_size=1024, epochs=1)

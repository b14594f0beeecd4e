import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="")
tf.config.experimental_connect_to_cluster(resolver)
tf.tpu.experimental.initialize_tpu_system(resolver)
strategy = tf.distribute.TPUStrategy(resolver)

model = tf.keras.Sequential([tf.keras.layers.Dense(128, activation="relu", input_shape=(784,)),
                             tf.keras.layers.Dense(10)])
with strategy.scope():
    model.compile(optimizer="adam", loss="sparse_categorical_crossentropy")

# TensorFlow training skeleton: v3-8 (2x2), data=8, remat none, global batch 2048 (planned by tpu-doctor for examples/configs/bert-base-uncased.json)
import argparse

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--per_device_batch", type=int, default=256)
args, _ = parser.parse_known_args()

resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
tf.config.experimental_connect_to_cluster(resolver)
tf.tpu.experimental.initialize_tpu_system(resolver)
strategy = tf.distribute.TPUStrategy(resolver)

# The global batch is the per-replica batch times the replicas TPUStrategy runs.
global_batch = args.per_device_batch * strategy.num_replicas_in_sync
tf.keras.mixed_precision.set_global_policy("mixed_bfloat16")


def build_dataset():
    raise NotImplementedError("return your tf.data.Dataset of (features, labels) here")


def build_model():
    raise NotImplementedError("return your tf.keras.Model here")


# drop_remainder=True: every batch has the static shape XLA compiled for.
dataset = build_dataset().shuffle(10_000).batch(global_batch, drop_remainder=True).prefetch(
    tf.data.AUTOTUNE)
with strategy.scope():
    model = build_model()
    model.compile(optimizer=tf.keras.optimizers.AdamW(3e-4), loss="sparse_categorical_crossentropy",
                  steps_per_execution=32)
model.fit(dataset, epochs=1)

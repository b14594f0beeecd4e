# float16 chosen under a command-line flag: whether the TPU run sets it is a guess, so a note
# (the unconditional case is a warning: fires_float64_and_float16.py).
import argparse

import tensorflow as tf

parser = argparse.ArgumentParser()
parser.add_argument("--mixed_precision", action="store_true")
args = parser.parse_args()

if args.mixed_precision:
    tf.keras.mixed_precision.set_global_policy("mixed_float16")

strategy = tf.distribute.TPUStrategy(tf.distribute.cluster_resolver.TPUClusterResolver())
with strategy.scope():
    model = tf.keras.Sequential([tf.keras.layers.Dense(10)])

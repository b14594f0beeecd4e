import tensorflow as tf

resolver = tf.distribute.cluster_resolver.TPUClusterResolver(tpu="local")
strategy = tf.distribute.TPUStrategy(resolver)
BATCH_SIZE = 1024
dataset = tf.data.TFRecordDataset(["gs://bucket/train.tfrecord"]).batch(BATCH_SIZE)

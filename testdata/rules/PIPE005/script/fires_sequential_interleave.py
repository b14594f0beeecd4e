import tensorflow as tf

files = tf.data.Dataset.list_files("gs://bucket/train-*.tfrecord", shuffle=True)
ds = files.interleave(tf.data.TFRecordDataset, cycle_length=16)
# Flattening datasets of files reads them, one at a time.
readers = tf.data.Dataset.list_files("gs://bucket/x-*").map(tf.data.TFRecordDataset)
flat = readers.interleave(lambda d: d)

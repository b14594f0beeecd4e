# `tf` is this script's own object, not TensorFlow: its py_function is not tf.data's.
from tensor_factory import TensorFactory

tf = TensorFactory()
dataset = tf.data.Dataset.from_tensor_slices((filenames, labels))
dataset = dataset.map(lambda f, l: tf.py_function(read, [f, l], [tf.string, tf.int32]))

# A guide's snippet, pasted without its imports: `tf` is TensorFlow as the guide always imports it.
def _read_py_function(filename, label):
    return open(filename.decode(), "rb").read(), label


dataset = tf.data.Dataset.from_tensor_slices((filenames, labels))
dataset = dataset.map(
    lambda filename, label: tuple(
        tf.py_function(_read_py_function, [filename, label], [tf.string, tf.int32])
    )
)

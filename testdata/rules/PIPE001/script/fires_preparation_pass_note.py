import numpy as np
import tensorflow as tf
from PIL import Image


def estimate_pose(image):
    # A Python library's model, run once per image to make conditioning images for training.
    return np.asarray(Image.fromarray(image.numpy()).convert("L"))


images = tf.data.Dataset.list_files("gs://bucket/raw/*.png").map(tf.io.read_file)
images = images.map(tf.io.decode_png)
poses = images.map(lambda image: tf.py_function(estimate_pose, [image], tf.uint8))

# The pipeline is iterated here, to write files, in no training step: a note, not a warning.
for i, pose in enumerate(poses.as_numpy_iterator()):
    Image.fromarray(pose).save(f"poses/{i}.png")

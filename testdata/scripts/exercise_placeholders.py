# A course exercise: assignments left for the student to complete. An unfinished assignment at
# the end makes tree-sitter's whole tree an ERROR around the sound statements before it; they are
# still read and get findings.
import os

import tensorflow as tf

base_dir = os.path.join("gs://bucket", "flowers")
files = tf.data.Dataset.list_files(base_dir + "/train/*.tfrecord")
train_ds = files.interleave(tf.data.TFRecordDataset).batch(32)

model = tf.keras.Sequential([tf.keras.layers.Flatten(), tf.keras.layers.Dense(5)])
model.compile("adam", "sparse_categorical_crossentropy")
model.fit(train_ds, epochs=1)

model = 
epochs = 
history = 

acc = 
val_acc = 
loss = 
val_loss = 
epochs_range = 

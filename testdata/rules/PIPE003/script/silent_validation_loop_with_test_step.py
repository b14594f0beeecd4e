import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
optimizer = tf.keras.optimizers.Adam()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
x = tf.random.normal([1000, 8])
y = tf.random.uniform([1000], maxval=10, dtype=tf.int32)
train = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(1000).batch(64).prefetch(2)
val = tf.data.Dataset.from_tensor_slices((x, y)).batch(64)


@tf.function
def train_step(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_weights),
                                  model.trainable_weights))


@tf.function
def test_step(xb, yb):
    return loss_fn(yb, model(xb, training=False))


for epoch in range(3):
    for xb, yb in train:
        train_step(xb, yb)
    # An evaluation pass: its tf.function takes no gradient, so this is not a training input.
    for xb, yb in val:
        test_step(xb, yb)

"""A correct custom training loop, in the shape of the TensorFlow guide's: logits, from_logits=True,
training=True inside the tape, a compiled step, metrics reset each epoch. tapelint reports nothing."""

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.random((512, 28, 28), dtype=np.float32)
y_train = rng.integers(0, 10, size=512)

model = tf.keras.Sequential([
    tf.keras.layers.Input(shape=(28, 28)),
    tf.keras.layers.Flatten(),
    tf.keras.layers.Dense(128, activation="relu"),
    tf.keras.layers.Dropout(0.2),
    tf.keras.layers.Dense(10),
])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)
train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")

dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(512).batch(64)


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss.update_state(loss)
    train_accuracy.update_state(labels, logits)


for epoch in range(2):
    train_loss.reset_state()
    train_accuracy.reset_state()
    for images, labels in dataset:
        train_step(images, labels)
    print(f"epoch {epoch}: loss {float(train_loss.result()):.4f}, accuracy {float(train_accuracy.result()):.3f}")

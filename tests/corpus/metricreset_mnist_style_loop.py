# expect: TL601
"""The TF2 "quickstart for experts" loop with the `reset_state()` calls at the top of the epoch left out:
the metrics are updated in tf.function steps and printed once per epoch (the bug fixed in
lucasjinreal/tfboys#2, "reset the states of tf.Metrics object at the end of each epoch").

Observed on TF 2.21 (CPU): the printed training accuracy of epochs 1-5 is 0.684, 0.786, 0.841, 0.876,
0.900 and the loss 0.601 -> 0.255; the same program with the metrics reset at the top of each epoch
prints 0.729, 0.898, 0.965, 0.982, 0.996 and a loss of 0.070 at epoch 5."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
tf.random.set_seed(0)
x_train = rng.normal(size=(512, 20)).astype("float32")
y_train = (x_train[:, :3].sum(axis=1) > 0).astype("int64")
x_test = rng.normal(size=(256, 20)).astype("float32")
y_test = (x_test[:, :3].sum(axis=1) > 0).astype("int64")
train_ds = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(512).batch(32)
test_ds = tf.data.Dataset.from_tensor_slices((x_test, y_test)).batch(64)

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(2)])
loss_object = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-2)

train_loss = tf.keras.metrics.Mean(name="train_loss")
train_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="train_accuracy")
test_loss = tf.keras.metrics.Mean(name="test_loss")
test_accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="test_accuracy")


@tf.function
def train_step(images, labels):
    with tf.GradientTape() as tape:
        predictions = model(images, training=True)
        loss = loss_object(labels, predictions)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss(loss)
    train_accuracy(labels, predictions)


@tf.function
def test_step(images, labels):
    predictions = model(images, training=False)
    test_loss(loss_object(labels, predictions))
    test_accuracy(labels, predictions)


for epoch in range(5):
    for images, labels in train_ds:
        train_step(images, labels)
    for test_images, test_labels in test_ds:
        test_step(test_images, test_labels)
    print(
        f"Epoch {epoch + 1}, Loss: {train_loss.result():.4f}, Accuracy: {train_accuracy.result():.4f}, "
        f"Test Loss: {test_loss.result():.4f}, Test Accuracy: {test_accuracy.result():.4f}"
    )

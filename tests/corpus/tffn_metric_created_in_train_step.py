# expect: TL403
"""A classifier whose `tf.function` train step builds a fresh accuracy metric for every batch (the
pattern of "Can't declare tf.Variable in @tf.function decorated function",
https://github.com/tensorflow/tensorflow/issues/26812: a metric holds tf.Variables).

Observed on TF 2.21 (CPU): the first call of `train_step` raises `ValueError: tf.function only supports
singleton tf.Variables created on the first call`; no step ever runs."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 20)).astype("float32")
y_train = (x_train[:, :5].sum(axis=1) > 0).astype("int32")
dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).batch(32)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(20,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(2),
])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


@tf.function
def train_step(x, y):
    batch_accuracy = tf.keras.metrics.SparseCategoricalAccuracy()
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    batch_accuracy.update_state(y, logits)
    return loss, batch_accuracy.result()


for epoch in range(3):
    for x, y in dataset:
        loss, accuracy = train_step(x, y)
    print(f"epoch {epoch}: loss {float(loss):.4f} accuracy {float(accuracy):.3f}")

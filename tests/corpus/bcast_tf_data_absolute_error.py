# expect: TL110
"""A `tf.data` pipeline of (features, 1-D targets) feeding a `tf.function` train step with a hand-written
mean absolute error against a `Dense(1)` output: the (B,) vs (B, 1) broadcast of
tensorflow/tensorflow#28901, inside batches.

Observed on TF 2.21 (CPU): each batch's error matrix is (32, 32); after 8 epochs the model predicts
almost a constant (prediction std 0.05 against the targets' 0.82), R^2 = 0.02, and the loss wanders
around 0.75. With `tf.squeeze(prediction, -1)` the same loop reaches loss 0.43, R^2 = 0.58 (prediction
std 0.74) in the same 8 epochs."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.uniform(-1, 1, size=(512, 4)).astype("float32")
targets = (np.sin(3 * features[:, 0]) + features[:, 1] * features[:, 2]).astype("float32")

dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(512, seed=0).batch(32)
model = tf.keras.Sequential([
    tf.keras.Input((4,)),
    tf.keras.layers.Dense(64, activation="tanh"),
    tf.keras.layers.Dense(1),
])
optimizer = tf.keras.optimizers.Adam(3e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = tf.reduce_mean(tf.abs(tf.subtract(y, prediction)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(8):
    for x_batch, y_batch in dataset:
        loss = train_step(x_batch, y_batch)
    print(epoch, round(float(loss), 3))

final = model(features).numpy()[:, 0]
r2 = 1 - np.mean((targets - final) ** 2) / np.var(targets)
print("R^2", round(float(r2), 3), "prediction std", round(float(final.std()), 3), "target std", round(float(targets.std()), 3))

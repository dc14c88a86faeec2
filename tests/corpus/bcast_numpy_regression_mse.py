# expect: TL110
"""A regression MLP trained in a custom loop with a hand-written MSE, where the targets are 1-D and the
model ends in `Dense(1)` (the bug of tensorflow/tensorflow#28901: the loss does not go down as `fit`'s
does; fixed there with `y = y[:, tf.newaxis]`).

Observed on TF 2.21 (CPU): `y - prediction` has shape (256, 256). The loss goes 5.18 -> 5.06 (the target
variance) and stays there; after 150 Adam steps R^2 = 0.00: the predictions cluster around the target
mean (their std 0.011, the targets' 2.25). The same loop with `y[:, None]` reaches loss 0.016, R^2 = 0.997."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(256, 3)).astype("float32")
y = (x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=256)).astype("float32")

model = tf.keras.Sequential([
    tf.keras.Input((3,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(1),
])
optimizer = tf.keras.optimizers.Adam(1e-2)

for step in range(150):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = tf.reduce_mean(tf.square(y - prediction))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 50 == 0 or step == 149:
        print(step, round(float(loss), 3), "residual shape", (y - prediction).shape)

final = model(x).numpy()[:, 0]
r2 = 1 - np.mean((y - final) ** 2) / np.var(y)
print("R^2", round(float(r2), 3), "prediction std", round(float(final.std()), 3), "target std", round(float(y.std()), 3))

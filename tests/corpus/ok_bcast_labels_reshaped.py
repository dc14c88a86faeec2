# expect: none
"""Near miss of TL110: 1-D regression targets reshaped to (N, 1) before the hand-written MSE, the fix
given in tensorflow/tensorflow#28901 (`y = y[:, tf.newaxis]`).

Observed on TF 2.21 (CPU): `y - prediction` has shape (256, 1); the loss goes 5.04 -> 0.012 in 150 steps,
R^2 = 0.998."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(256, 3)).astype("float32")
y = (x @ np.array([1.0, -2.0, 0.5]) + 0.1 * rng.normal(size=256)).astype("float32")
y = y.reshape(-1, 1)

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

final = model(x).numpy()
r2 = 1 - np.mean((y - final) ** 2) / np.var(y)
print("R^2", round(float(r2), 3))

# expect: none
"""Near miss of TL110: the target is the last column of a table (`data[:, -1]`, shape (N,)) and the
`Dense(1)` prediction is sliced to (N,) with `prediction[:, 0]` before a `keras.ops` loss, so the shapes
match (the other fix for the mismatch of tensorflow/tensorflow#28901).

Observed on TF 2.21 (CPU): the residual has shape (400,); the loss goes 2.04 -> 0.006 in 150 steps,
R^2 = 0.995."""
import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
data = rng.normal(size=(400, 6)).astype("float32")
data[:, -1] = data[:, 0] - 0.5 * data[:, 1] + 0.3 * data[:, 2] * data[:, 3]
x, y = data[:, :-1], data[:, -1]

inputs = keras.Input((5,))
hidden = keras.layers.Dense(32, activation="relu")(inputs)
outputs = keras.layers.Dense(1)(hidden)
model = keras.Model(inputs, outputs)
optimizer = keras.optimizers.Adam(1e-2)

for step in range(150):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)[:, 0]
        loss = keras.ops.mean(keras.ops.square(keras.ops.subtract(y, prediction)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 50 == 0 or step == 149:
        print(step, round(float(loss), 3), "residual shape", keras.ops.subtract(y, prediction).shape)

final = model(x).numpy()[:, 0]
r2 = 1 - np.mean((y - final) ** 2) / np.var(y)
print("R^2", round(float(r2), 3))

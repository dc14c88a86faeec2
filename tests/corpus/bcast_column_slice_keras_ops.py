# expect: TL110
"""A table whose last column is the target (`data[:, -1]`), a functional model with a `Dense(1)` head and a
loss written with `keras.ops`: `keras.ops.subtract` broadcasts (B,) against (B, 1) just like `-` (the
shape mismatch of tensorflow/tensorflow#28901; Keras' own losses align the ranks, `keras.ops` does not).

Observed on TF 2.21 (CPU): `keras.ops.subtract(y, prediction)` has shape (400, 400); the loss goes 1.87
-> 1.249, exactly the target variance, and R^2 = 0.00. With `keras.losses.MeanSquaredError()(y,
prediction)` (1-D `y` as well) the same loop reaches loss 0.007, R^2 = 0.995."""
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
        prediction = model(x, training=True)
        loss = keras.ops.mean(keras.ops.square(keras.ops.subtract(y, prediction)))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 50 == 0 or step == 149:
        print(step, round(float(loss), 3), "residual shape", keras.ops.subtract(y, prediction).shape)

final = model(x).numpy()[:, 0]
r2 = 1 - np.mean((y - final) ** 2) / np.var(y)
print("R^2", round(float(r2), 3), "target variance", round(float(np.var(y)), 3))

# expect: none
"""The near miss of a tanh output with a cross-entropy
(https://datascience.stackexchange.com/questions/57738/can-tanh-be-used-as-an-output-for-a-binary-classifier):
a `tanh` output unit for a target in [-1, 1], trained with mean squared error (a regression, not a
probability).

Observed on TF 2.21 (CPU): the MSE falls 0.153 -> 0.003 over 20 epochs; predictions span [-0.94, 0.92]
as the targets (a sine) do."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
angles = rng.uniform(-np.pi, np.pi, size=(1024, 1)).astype("float32")
targets = np.sin(angles).astype("float32")

model = tf.keras.Sequential([
    tf.keras.Input((1,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(1, activation="tanh"),
])
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(angles, targets, epochs=20, batch_size=64, verbose=0)
predictions = model.predict(angles, verbose=0)
print("mse", round(history.history["loss"][0], 3), "->", round(history.history["loss"][-1], 4))
print("predictions in", predictions.min().round(2), predictions.max().round(2))

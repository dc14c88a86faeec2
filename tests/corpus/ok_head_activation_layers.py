# expect: none
"""The near miss of hidden `Dense` layers without an activation argument: each is followed by an activation
layer (`Activation("relu")`, `LeakyReLU`), the spelling of the Keras guide that separates the two (see
https://stats.stackexchange.com/questions/384199/effect-on-a-hidden-layer-without-activation for the
linear version).

Observed on TF 2.21 (CPU), on two half-moons, 30 epochs: loss 0.004, accuracy 0.999 (the same layers
without the activation layers stay at a logistic regression's 0.88)."""
import numpy as np
import tensorflow as tf
from tensorflow.keras.layers import Activation, Dense, LeakyReLU


def half_moons(n, noise, rng):
    angles = rng.uniform(0, np.pi, size=n)
    upper = rng.random(n) < 0.5
    x = np.where(upper, np.cos(angles), 1 - np.cos(angles))
    y = np.where(upper, np.sin(angles), 0.5 - np.sin(angles))
    points = np.stack([x, y], axis=1) + noise * rng.normal(size=(n, 2))
    return points.astype("float32"), upper.astype("float32")


tf.keras.utils.set_random_seed(0)
points, labels = half_moons(2000, 0.1, np.random.default_rng(0))

model = tf.keras.Sequential()
model.add(tf.keras.Input((2,)))
model.add(Dense(64))
model.add(Activation("relu"))
model.add(Dense(32))
model.add(LeakyReLU(0.1))
model.add(Dense(1, activation="sigmoid"))
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(points, labels, epochs=30, batch_size=64, verbose=0)
print("loss", round(history.history["loss"][-1], 3), "accuracy", round(history.history["accuracy"][-1], 3))

# expect: TL115
"""A functional classifier of two concentric rings, built as one chain of `Dense` layers of which the hidden
ones are linear (`activation="linear"` and none): the whole model is one softmax regression (the mistake of
https://github.com/aymericdamien/TensorFlow-Examples/issues/175, "this example is equal with a multinomial
logistic regression", and of https://github.com/FluxML/model-zoo/issues/339 in another framework).

Observed on TF 2.21 (CPU), 2 000 points, 30 epochs: loss 0.694, accuracy 0.496, chance (no line separates
a ring from the disc inside it). With `activation="relu"` on the two hidden layers: loss 0.005, accuracy
0.998."""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
radius = np.where(rng.random(2000) < 0.5, 0.5, 1.0)
angle = rng.uniform(0, 2 * np.pi, size=2000)
points = np.stack([radius * np.cos(angle), radius * np.sin(angle)], axis=1) + 0.08 * rng.normal(size=(2000, 2))
points = points.astype("float32")
rings = (radius > 0.75).astype("int32")

inputs = tf.keras.Input(shape=(2,))
hidden = layers.Dense(32, activation="linear")(inputs)
hidden = layers.Dense(16)(hidden)
outputs = layers.Dense(2, activation="softmax")(hidden)
model = tf.keras.Model(inputs=inputs, outputs=outputs)
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])
history = model.fit(points, rings, epochs=30, batch_size=64, verbose=0)
print("loss", round(history.history["loss"][-1], 3), "accuracy", round(history.history["accuracy"][-1], 3))

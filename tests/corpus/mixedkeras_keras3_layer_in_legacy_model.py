# expect: TL503
"""The reverse mix: a program that switches `tf.keras` to tf_keras with `TF_USE_LEGACY_KERAS=1` (as the
hub threads advise, e.g. tensorflow/tensorflow#86041, where installing tf_keras fixed one section and the
next still failed) but still builds one layer from the standalone `keras` package, which stays Keras 3.

Observed on TF 2.21 (CPU), with tf_keras 2.21 installed: `tf.keras.Sequential([...])` raises
`TypeError: The added layer must be an instance of class Layer. Received: layer=<Dense name=dense,
built=False> of type <class 'keras.src.layers.core.dense.Dense'>.`; nothing trains."""
import os

os.environ["TF_USE_LEGACY_KERAS"] = "1"

import keras
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x[:, :2].sum(axis=1, keepdims=True)).astype("float32")

model = tf.keras.Sequential([
    tf.keras.Input(shape=(8,)),
    tf.keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1),
])
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2), loss="mse")
history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
print("loss", [round(v, 4) for v in history.history["loss"]])

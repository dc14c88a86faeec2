# expect: TL102
"""A digit classifier whose 10-unit output layer is a ReLU, trained with `categorical_crossentropy` (the
question "How does Keras deal with log(0) for categorical cross entropy?",
https://example-a.com/answer/50018745: "my output layer is ReLu. Therefore a lot of its outputs are 0").

Observed on TF 2.21 (CPU), on 10 Gaussian blobs in 64 dimensions: the loss is NaN from the first epoch
and accuracy stays at 0.105 for 10 epochs; after training every output is exactly 0. The loss divides each
row by its sum before clipping: a row of ReLU zeros gives 0 / 0 = NaN
(`categorical_crossentropy([[1, 0]], [[0, 0]])` is NaN), and one NaN spoils the whole batch. The same
model with `activation="softmax"` reaches loss 0.004 and accuracy 1.00."""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
centres = rng.normal(size=(10, 64)).astype("float32")
digits = rng.integers(0, 10, size=2000)
images = (centres[digits] + 0.8 * rng.normal(size=(2000, 64))).astype("float32")
targets = tf.keras.utils.to_categorical(digits, 10)

inputs = tf.keras.Input(shape=(64,))
hidden = layers.Dense(128, activation="relu")(inputs)
outputs = layers.Dense(10, activation="relu")(hidden)
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])

history = model.fit(images, targets, epochs=10, batch_size=64, verbose=0)
scores = model.predict(images, verbose=0)
print("loss", [round(v, 3) for v in history.history["loss"]])
print("accuracy", [round(v, 3) for v in history.history["accuracy"]])
print("share of outputs exactly 0:", (scores == 0).mean().round(2))

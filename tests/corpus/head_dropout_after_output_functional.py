# expect: TL116
"""A functional classifier whose `outputs` are `Dropout(0.5)` applied to the softmax layer, compiled with
`categorical_crossentropy` (the model of https://github.com/tensorflow/tensorflow/issues/25175, a network
ending in `Dropout`: a positive loss in `fit`, zero in `evaluate`; and of
https://coderapp.vercel.app/answer/74181228: "which is not valid at all to apply dropout to output neurons").

Observed on TF 2.21 (CPU), on 5 Gaussian blobs: `fit` reports a loss of NaN in each of the 15 epochs and a
training accuracy of 0.482, while `evaluate` on the same data gives loss 0.12 and accuracy 0.97. With five
classes, 0.5^5 = 3% of the rows lose every probability; the categorical cross-entropy divides each row by
its sum, 0 / 0. Training cannot be monitored (and a NaN-stopping callback would stop it at once). With the
dropout before the output layer the training loss goes 1.55 -> 0.19 (accuracy 0.937), evaluate 0.106
and 0.966."""
import numpy as np
import tensorflow as tf
from tensorflow.keras import layers

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(1)
centres = rng.normal(size=(5, 20)).astype("float32")
classes = rng.integers(0, 5, size=2000)
features = (centres[classes] + 1.0 * rng.normal(size=(2000, 20))).astype("float32")
targets = tf.keras.utils.to_categorical(classes, 5)

inputs = tf.keras.Input((20,))
x = layers.Dense(64, activation="relu")(inputs)
model = tf.keras.Model(inputs, layers.Dropout(0.5)(layers.Dense(5, activation="softmax")(x)))
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
history = model.fit(features, targets, epochs=15, batch_size=64, verbose=0)
evaluated = model.evaluate(features, targets, verbose=0)
print("fit loss", [round(v, 3) for v in history.history["loss"]])
print("fit accuracy", [round(v, 3) for v in history.history["accuracy"]][-1])
print("evaluate loss", round(evaluated[0], 3), "accuracy", round(evaluated[1], 3))

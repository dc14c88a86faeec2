# expect: none
"""The near miss of dropout after the output: a feature body that ends in `Dropout` (the end of a
`Sequential` and of a functional encoder), used inside larger models whose own output layer comes after it.
The loss is computed on the larger models' outputs, never on the bodies' (contrast
https://github.com/tensorflow/tensorflow/issues/25175, where the trained model itself ends in `Dropout`).

Observed on TF 2.21 (CPU), on 5 Gaussian blobs: the Sequential classifier's training loss goes
1.78 -> 0.272 in 10 epochs (evaluate 0.144, accuracy 0.965); the functional one's 1.497 -> 0.174
(evaluate 0.121, accuracy 0.965); no NaN, unlike the same data with the dropout after the softmax."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(0)
rng = np.random.default_rng(1)
centres = rng.normal(size=(5, 20)).astype("float32")
classes = rng.integers(0, 5, size=2000)
features = (centres[classes] + 1.0 * rng.normal(size=(2000, 20))).astype("float32")
targets = keras.utils.to_categorical(classes, 5)

body = keras.Sequential([keras.Input((20,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dropout(0.5)])
classifier = keras.Sequential([body, keras.layers.Dense(5, activation="softmax")])
classifier.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
history = classifier.fit(features, targets, epochs=10, batch_size=64, verbose=0)
evaluated = classifier.evaluate(features, targets, verbose=0)
print("sequential: fit loss", round(history.history["loss"][0], 3), "->", round(history.history["loss"][-1], 3),
      "evaluate", [round(v, 3) for v in evaluated])

inputs = keras.Input((20,))
encoded = keras.layers.Dropout(0.3)(keras.layers.Dense(64, activation="relu")(inputs))
encoder = keras.Model(inputs, encoded)
outputs = keras.layers.Dense(5, activation="softmax")(encoder(inputs))
functional = keras.Model(inputs, outputs)
functional.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
history = functional.fit(features, targets, epochs=10, batch_size=64, verbose=0)
evaluated = functional.evaluate(features, targets, verbose=0)
print("functional: fit loss", round(history.history["loss"][0], 3), "->", round(history.history["loss"][-1], 3),
      "evaluate", [round(v, 3) for v in evaluated])

# expect: TL116
"""An MLP classifier whose softmax output layer is followed by `Dropout(0.5)`, compiled with a cross-entropy
(the mistake of https://tutorialexample.com/can-apply-a-dropout-layer-to-softmax-layer-in-neural-networks-deep-learning-tutorial:
"If you apply a dropout to softmax layer, you may get only two output not five").

Observed on TF 2.21 (CPU), on 10 Gaussian blobs: `fit` reports a training loss of 8.02 in the first epoch
and 1.21 after 20, while `evaluate` on the same data gives 0.002 (accuracy 0.999): the loss that drives
training measures the dropout, not the model. In training mode 50% of the predicted probabilities are
exactly 0 and the rows sum to anything from 0.0 to 2.0. The same layers with the dropout before the output
layer train from 1.99 to 0.028 (evaluate 0.005), rows summing to 1.0."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
centres = rng.normal(size=(10, 32)).astype("float32")
classes = rng.integers(0, 10, size=2000)
features = (centres[classes] + 1.0 * rng.normal(size=(2000, 32))).astype("float32")

model = keras.Sequential([
    keras.Input((32,)),
    keras.layers.Dense(128, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
    keras.layers.Dropout(0.5),
])
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(features, classes, epochs=20, batch_size=64, verbose=0)
evaluated = model.evaluate(features, classes, verbose=0)
training_mode = model(features[:500], training=True).numpy()
print("fit loss", [round(v, 2) for v in history.history["loss"][::5]], "last", round(history.history["loss"][-1], 3))
print("evaluate loss", round(evaluated[0], 3), "accuracy", round(evaluated[1], 3))
print("training mode: share exactly 0", (training_mode == 0).mean().round(2),
      "row sums", training_mode.sum(axis=1).min().round(2), training_mode.sum(axis=1).max().round(2))

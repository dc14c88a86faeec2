# expect: TL102
"""A threshold classifier whose output unit is a ReLU, trained with `binary_crossentropy` (the model of the
question "Why does accuracy remain the same", https://geeksmental.com/question/why-does-accuracy-remain-the-same:
"accuracy is always about 0.5"; loss 7.9).

Observed on TF 2.21 (CPU): loss 8.003 and accuracy 0.503 in every one of the 8 epochs; every prediction is
exactly 0.0. A ReLU output of 0 is clipped to 1e-7 by the loss: each positive sample costs -log(1e-7) = 16.1
and sends back no gradient, so nothing moves. Where the ReLU starts positive (seeds 2 and 3) the model does
train (accuracy 0.98 and 0.92) but its "probabilities" reach 1.44 and 1.06: values above 1 - 1e-7 are
clipped too and pass no gradient, and `predict` does not return probabilities."""
import numpy as np
import keras
from keras import Sequential
from keras.layers import Dense

keras.utils.set_random_seed(1)
threshold = 50.0
rng = np.random.default_rng(0)
values = rng.uniform(0, 2 * threshold, size=(2000, 1)).astype("float32")
labels = (values[:, 0] > threshold).astype("float32")

model = Sequential()
model.add(Dense(3, input_dim=1, activation="relu"))
model.add(Dense(5, activation="relu"))
model.add(Dense(1, activation="relu"))
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

history = model.fit(values / (2 * threshold), labels, epochs=8, batch_size=32, verbose=0)
predictions = model.predict(values / (2 * threshold), verbose=0)
print("loss", [round(v, 3) for v in history.history["loss"]])
print("accuracy", [round(v, 3) for v in history.history["accuracy"]])
print("predictions in", float(predictions.min()), float(predictions.max()))

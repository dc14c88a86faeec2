# expect: none
"""The near miss of the ReLU-output threshold classifier of
https://geeksmental.com/question/why-does-accuracy-remain-the-same: ReLU hidden layers and a sigmoid output
unit, with `binary_crossentropy`.

Observed on TF 2.21 (CPU): the loss falls 0.64 -> 0.19 over 8 epochs, accuracy 0.98, and every prediction
is a probability, in [0.11, 0.99]."""
import numpy as np
import keras
from keras import Sequential
from keras.layers import Dense

keras.utils.set_random_seed(2)
rng = np.random.default_rng(0)
values = rng.uniform(0, 1, size=(2000, 1)).astype("float32")
labels = (values[:, 0] > 0.5).astype("float32")

model = Sequential()
model.add(keras.Input((1,)))
model.add(Dense(16, activation="relu"))
model.add(Dense(8, activation="relu"))
model.add(Dense(1, activation="sigmoid"))
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])

history = model.fit(values, labels, epochs=8, batch_size=32, verbose=0)
predictions = model.predict(values, verbose=0)
print("loss", [round(v, 3) for v in history.history["loss"]])
print("accuracy", round(history.history["accuracy"][-1], 3))
print("predictions in", float(predictions.min()), float(predictions.max()))

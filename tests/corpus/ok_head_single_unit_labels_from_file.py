# expect: none
"""A binary classifier (one `sigmoid` unit, `binary_crossentropy`) whose features and labels are read
from `.npy` files, the setting of
https://stackoverflow.com/questions/44151760/received-a-label-value-of-1-which-is-outside-the-valid-range-of-0-1-python
once its answer is applied ("For a binary classification, binary_crossentropy should be a better
choice"). To run on its own, the script first writes the two files with synthetic data (0/1 labels);
the training part reads them back as a real script would. The near miss of TL112: how many classes the
file holds is unknown to a static reader, so nothing may be reported.

Observed on TF 2.21 (CPU): loss 0.33, 0.10, 0.06, 0.04 over 4 epochs, accuracy 0.99.
"""
import os
import tempfile

import numpy as np
from tensorflow.keras.layers import Dense
from tensorflow.keras.models import Sequential
from tensorflow.keras.utils import set_random_seed

set_random_seed(10)
data_dir = tempfile.mkdtemp()
rng = np.random.default_rng(10)
raw = rng.normal(size=(1500, 16)).astype("float32")
np.save(os.path.join(data_dir, "features.npy"), raw)
np.save(os.path.join(data_dir, "labels.npy"), (raw[:, :4].sum(axis=1) > 0).astype("int64"))

training_data = np.load(os.path.join(data_dir, "features.npy"))
training_labels = np.load(os.path.join(data_dir, "labels.npy"))

model = Sequential()
model.add(Dense(128, activation="relu", input_shape=(16,)))
model.add(Dense(64, activation="relu"))
model.add(Dense(1, activation="sigmoid"))
model.compile(loss="binary_crossentropy", optimizer="adam", metrics=["accuracy"])
history = model.fit(training_data, training_labels, epochs=4, batch_size=8, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("accuracy:", round(history.history["accuracy"][-1], 3))

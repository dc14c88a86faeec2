# expect: TL502
"""A classifier trained with `fit()` that keeps its best epoch with `ModelCheckpoint("best_model.hdf5",
save_best_only=True)`, the Keras 2 documentation's spelling, as in hfawaz/dl-4-tsc#53 ("keras 3.8.0:
ValueError: The filepath provided must end in `.keras` ... Received: filepath=....hdf5") and
AISyLab/Triplet-attack#1 ("keras>=3.0 no longer supported .hdf5 format").

Observed on TF 2.21 / Keras 3.15 (CPU): the callback is never made: `ModelCheckpoint(...)` raises
ValueError: The filepath provided must end in `.keras` (Keras model format). Received:
filepath=.../best_model.hdf5, before the first epoch (`.keras` and `.h5` are accepted; with
`save_weights_only=True` only `.weights.h5`). With `best_model.keras` the run completes, validation accuracy
0.67, 0.75, 0.83 over 3 epochs (seeded)."""
import os
import tempfile

import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x[:, 0] + x[:, 1] > 0).astype("int32")

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(2, activation="softmax")])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="sparse_categorical_crossentropy",
              metrics=["accuracy"])

out = tempfile.mkdtemp()
checkpoint = tf.keras.callbacks.ModelCheckpoint(os.path.join(out, "best_model.hdf5"), monitor="val_loss",
                                                save_best_only=True)
history = model.fit(x, y, validation_split=0.25, epochs=3, batch_size=32, callbacks=[checkpoint], verbose=0)
print(history.history["val_accuracy"])

# expect: none
"""The classifier of k3api_model_checkpoint_hdf5.py, checkpointed the Keras 3 way: the best model to a
`.keras` file and each epoch's weights to a `.weights.h5` file (the fix of tensorflow/docs#2327 and
keras-team/keras-io#1568), with the classes read from `np.argmax(model.predict(x))` (keras-team/keras#17156).

Observed on TF 2.21 / Keras 3.15 (CPU): both callbacks are made and save every epoch (files best.keras and
epoch_01..03.weights.h5); validation accuracy 0.67, 0.75, 0.83 over 3 epochs (seeded); the reloaded best
model predicts the same classes as the trained one on every validation example."""
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
callbacks = [
    tf.keras.callbacks.ModelCheckpoint(os.path.join(out, "best.keras"), monitor="val_loss", save_best_only=True),
    tf.keras.callbacks.ModelCheckpoint(os.path.join(out, "epoch_{epoch:02d}.weights.h5"), save_weights_only=True),
]
history = model.fit(x, y, validation_split=0.25, epochs=3, batch_size=32, callbacks=callbacks, verbose=0)
print(history.history["val_accuracy"], sorted(os.listdir(out)))
best = tf.keras.models.load_model(os.path.join(out, "best.keras"))
same = np.argmax(best.predict(x[192:], verbose=0), axis=-1) == np.argmax(model.predict(x[192:], verbose=0), axis=-1)
print("same classes", bool(same.all()))

# expect: none
"""The same GradientTape regression loop as k3api_save_weights_checkpoint_prefix.py, saving the Keras 3 way:
weights to a `.weights.h5` file, the model to a `.keras` file, a legacy `.h5` copy, and a SavedModel with
`model.export()` (the replacements named in tensorflow/tflite-micro#3623 and keras-team/keras#18467).

Observed on TF 2.21 / Keras 3.15 (CPU): the loss falls over 20 steps (8.4, 6.5, 5.0, 3.7 at steps 0, 5, 10, 15; the
initialisation is not seeded); every save
succeeds and the reloaded weights give the same loss (difference 0.0)."""
import os
import tempfile

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(128, 6)).astype("float32")
y = (x @ rng.normal(size=(6, 1))).astype("float32")

model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(0.01)

for step in range(20):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 5 == 0:
        print(step, float(loss))

out = tempfile.mkdtemp()
model.save_weights(os.path.join(out, "ckpt.weights.h5"))
model.save(os.path.join(out, "model.keras"))
model.save(os.path.join(out, "legacy_model.h5"))
model.export(os.path.join(out, "serving"))
before = float(tf.reduce_mean(tf.square(model(x) - y)))
model.load_weights(os.path.join(out, "ckpt.weights.h5"))
print("difference", float(tf.reduce_mean(tf.square(model(x) - y))) - before)

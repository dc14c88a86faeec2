# expect: TL502
"""A GradientTape regression loop that checkpoints with `model.save_weights("<dir>/ckpt")`, the TF 2 guide's
spelling (a TF checkpoint prefix), and saves the model to a SavedModel directory with `save_format="tf"`
(the break reported in tensorflow/tflite-micro#3623 and keras-team/keras#18467).

Observed on TF 2.21 / Keras 3.15 (CPU): the loss falls from 9.0 to 4.3 over 20 steps, then
`save_weights` raises ValueError: The filename must end in `.weights.h5`. Received: filepath=.../ckpt
(and, with that line fixed, `model.save(..., save_format="tf")` raises ValueError: The `save_format`
argument is deprecated in Keras 3)."""
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
model.save_weights(os.path.join(out, "ckpt"))
model.save(os.path.join(out, "exported"), save_format="tf")

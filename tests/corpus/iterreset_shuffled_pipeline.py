# expect: TL603
"""A shuffled, mapped pipeline read with `next(iter(ds))` at every step. The shuffle hides the bug (each
batch looks different), but every new iterator refills the shuffle buffer from the start of the data, so
only the first `buffer_size` examples are ever drawn, and the pipeline is set up again on every step
(udacity/deep-learning-v2-pytorch#309: "it is look like the next() function work ... but because of
(shuffle=True)"; skhu101/GM-NAS#4).

Observed on TF 2.21 (CPU): after two epochs only 317 distinct examples of 4096 were drawn, none with
an index above 316 (buffer 256), at 72-88 ms per step; with one iterator made before the loop all 4096
are drawn at 15-36 ms per step, and the mse on all data is 0.038 instead of 0.051."""
import time

import numpy as np
import tensorflow as tf

rng = np.random.default_rng(7)
tf.random.set_seed(7)
n = 4096
x = rng.normal(size=(n, 8)).astype("float32")
y = (x @ rng.normal(size=(8, 1))).astype("float32")
index = np.arange(n, dtype="int64")
dataset = (tf.data.Dataset.from_tensor_slices((x, y, index))
           .shuffle(buffer_size=256)
           .map(lambda a, b, i: (a * 1.0, b, i))
           .batch(64)
           .prefetch(2))

model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.05)
drawn = set()

for epoch in range(2):
    start = time.perf_counter()
    for step in range(n // 64):
        xb, yb, ib = next(iter(dataset))
        drawn.update(ib.numpy().tolist())
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    elapsed = (time.perf_counter() - start) / (n // 64) * 1000
    full = float(tf.reduce_mean(tf.square(model(x, training=False) - y)))
    print(f"epoch {epoch}: distinct examples drawn {len(drawn)} of {n}, largest index {max(drawn)}, "
          f"mse on all data {full:.3f}, {elapsed:.1f} ms/step")

# expect: none
"""The residual block of k3api_positional_training_in_call.py with `training` passed by keyword, as
keras-team/keras#18676 asks for non-tensor arguments, and the head of the network picked by
`"head/" in v.path` (Keras 3's full variable path; `v.name` is only `kernel`), with an L2 penalty on the
variables whose short name is `kernel` (a filter that still matches on Keras 3).

Observed on TF 2.21 / Keras 3.15 (CPU): `fit` runs with dropout active (loss 5.04, 4.92, 4.62 over 3 epochs,
seeded); the path filter selects the 2 head variables of 4, the name filter the 2 kernels, and the
fine-tuning loop brings its loss from 4.60 to 1.13 in 20 steps."""
import numpy as np
import tensorflow as tf


class ResidualBlock(tf.keras.layers.Layer):
    def __init__(self, units, rate=0.2):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units, activation="relu")
        self.dropout = tf.keras.layers.Dropout(rate)

    def call(self, inputs, training=None):
        h = self.dense(inputs)
        return inputs + self.dropout(h, training=training)


tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 16)).astype("float32")
y = x[:, :1] * 2.0 + 0.1

inputs = tf.keras.Input((16,))
outputs = tf.keras.layers.Dense(1, name="head")(ResidualBlock(16)(inputs))
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
print(history.history["loss"])

head = [v for v in model.trainable_variables if "head/" in v.path]
kernels = [v for v in model.trainable_variables if "kernel" in v.name]
print(len(head), len(kernels), len(model.trainable_variables))
optimizer = tf.keras.optimizers.SGD(0.05)
for step in range(20):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
        loss += 1e-4 * tf.add_n([tf.reduce_sum(tf.square(k)) for k in kernels])
    grads = tape.gradient(loss, head)
    optimizer.apply_gradients(zip(grads, head))
    if step in (0, 19):
        print(step, float(loss))

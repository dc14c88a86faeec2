# expect: TL307
"""A subclassed regressor whose two layers share one `Constant(0.05)` initializer, so every hidden unit starts
with the same incoming and outgoing weights (the symmetry problem described in wagonhelm/NaNmnist#2 and
datascience.stackexchange.com/questions/19170).

Observed on TF 2.21 (CPU): after 300 Adam steps the 32 columns of the hidden kernel are still identical
(largest spread across units 0.0): the network has one unit's worth of capacity, and the loss is stuck at
0.554 from step 100 on (the target's variance is 0.574). The same model with default initializers
reaches 0.014 (spread across units 0.61)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
x = rng.uniform(-2, 2, size=(512, 3)).astype("float32")
y = (np.sin(2 * x[:, :1]) * np.cos(x[:, 1:2]) + 0.5 * x[:, 2:] ** 2).astype("float32")


class Regressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        init = tf.keras.initializers.Constant(0.05)
        self.hidden = tf.keras.layers.Dense(32, activation="tanh", kernel_initializer=init)
        self.head = tf.keras.layers.Dense(1, kernel_initializer=init)

    def call(self, inputs):
        return self.head(self.hidden(inputs))


model = Regressor()
optimizer = tf.keras.optimizers.Adam(1e-2)

for step in range(300):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = tf.reduce_mean(tf.square(y - prediction))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 100 == 0 or step == 299:
        print(step, round(float(loss), 3))
kernel = model.hidden.kernel.numpy()
print("target variance", round(float(np.var(y)), 3), "spread across units", float(np.max(np.std(kernel, axis=1))))

# expect: TL502
"""A residual block written for tf.keras 2 that forwards its `training` flag positionally to the inner
Dropout, `self.dropout(h, training)`. Keras 3 takes only tensors positionally; keras-team/keras#18676
("Only input tensors may be passed as positional arguments", an int there) was answered "This is
deliberate". Keras fills `call`'s `training` parameter with a Python bool whenever the layer runs in
`fit`, `evaluate` or `predict`.

Observed on TF 2.21 / Keras 3.15 (CPU): `model.fit` raises ValueError: Exception encountered when calling
ResidualBlock.call(). Only input tensors may be passed as positional arguments. The following argument
value should be passed as a keyword argument: True (of type <class 'bool'>). (Called as `model(x)` with
no flag, `training` is None and the block runs; with `training=training`, `fit` runs and the loss goes
5.04, 4.92, 4.62 over 3 epochs, seeded.)"""
import numpy as np
import tensorflow as tf


class ResidualBlock(tf.keras.layers.Layer):
    def __init__(self, units, rate=0.2):
        super().__init__()
        self.dense = tf.keras.layers.Dense(units, activation="relu")
        self.dropout = tf.keras.layers.Dropout(rate)

    def call(self, inputs, training=None):
        h = self.dense(inputs)
        return inputs + self.dropout(h, training)


tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 16)).astype("float32")
y = x[:, :1] * 2.0 + 0.1

inputs = tf.keras.Input((16,))
outputs = tf.keras.layers.Dense(1)(ResidualBlock(16)(inputs))
model = tf.keras.Model(inputs, outputs)
model.compile(optimizer="adam", loss="mse")
history = model.fit(x, y, epochs=3, batch_size=32, verbose=0)
print(history.history["loss"])

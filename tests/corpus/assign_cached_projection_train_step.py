# expect: TL010
"""A Keras model whose `train_step` caches its projection in a non-trainable weight and computes the loss
from the cache (the situation of tensorflow/tensorflow#54532, "tape.gradient returns None when assign is
used in a model for computation of a function").

Observed on TF 2.21 / Keras 3.15 (CPU): `fit` fails on the first batch with `ValueError: No gradients
provided for any variable.` (Keras 3's `assign` returns the value it was given, so `loss` computed from
that result would train; reading the weight back does not.)"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
x = rng.normal(size=(64, 5)).astype("float32")
y = (x @ rng.normal(size=(5, 3))).astype("float32")


class CachedProjection(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.project = tf.keras.layers.Dense(3)

    def build(self, input_shape):
        self.cache = self.add_weight(shape=(64, 3), initializer="zeros", trainable=False, name="cache")

    def call(self, inputs):
        return self.project(inputs)

    def train_step(self, data):
        inputs, targets = data
        with tf.GradientTape() as tape:
            self.cache.assign(self.project(inputs, training=True))
            loss = tf.reduce_mean(tf.square(self.cache - targets))
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = CachedProjection()
model.build((None, 5))
model.compile(optimizer=tf.keras.optimizers.Adam(1e-2))
model.fit(x, y, batch_size=64, epochs=3, verbose=2)

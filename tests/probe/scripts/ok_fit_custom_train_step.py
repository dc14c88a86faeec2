# expect: none
"""A correct loop in the Keras 3 style: a subclassed model overrides `train_step` with its own GradientTape,
and `model.fit` runs it (as a tf.function, the way Keras compiles it)."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(29)
rng = np.random.default_rng(29)
x = rng.normal(size=(256, 8)).astype("float32")
y = rng.integers(0, 4, size=256)


class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu")
        self.out = keras.layers.Dense(4)
        self.loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)

    def call(self, inputs, training=False):
        return self.out(self.hidden(inputs))

    def train_step(self, data):
        inputs, targets = data
        with tf.GradientTape() as tape:
            logits = self(inputs, training=True)
            loss = self.loss_fn(targets, logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        return {"loss": loss}


model = Classifier()
model.compile(optimizer=keras.optimizers.Adam(1e-3))
model.fit(x, y, batch_size=16, epochs=2, verbose=0)

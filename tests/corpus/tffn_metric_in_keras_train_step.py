# expect: TL403
"""A Keras 3 model that overrides `train_step` and builds its loss tracker inside the step; `fit` runs
`train_step` in a tf.function (the situation of "ValueError: tf.function only supports singleton
tf.Variables created on the first call" reports such as
https://github.com/tensorflow/tensorflow/issues/105654, a variable created while Keras traces).

Observed on TF 2.21 / Keras 3.15 (CPU): `model.fit` raises `ValueError: tf.function only supports
singleton tf.Variables created on the first call` before the first batch."""
import numpy as np
import keras
import tensorflow as tf

rng = np.random.default_rng(2)
x_train = rng.normal(size=(200, 10)).astype("float32")
y_train = rng.integers(0, 3, size=(200,))


class Classifier(keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = keras.layers.Dense(32, activation="relu")
        self.out = keras.layers.Dense(3)

    def call(self, x):
        return self.out(self.hidden(x))

    def train_step(self, data):
        x, y = data
        loss_tracker = keras.metrics.Mean(name="loss")
        with tf.GradientTape() as tape:
            logits = self(x, training=True)
            loss = self.compute_loss(x=x, y=y, y_pred=logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        loss_tracker.update_state(loss)
        return {"loss": loss_tracker.result()}


model = Classifier()
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
history = model.fit(x_train, y_train, batch_size=32, epochs=2, verbose=0)
print(history.history["loss"])

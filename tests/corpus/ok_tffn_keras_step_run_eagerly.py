# expect: none
"""A Keras 3 model whose `train_step` builds a per-batch loss tracker, compiled with `run_eagerly=True`,
so `fit` calls the step eagerly and no tf.function traces it (the near miss of the singleton-variable
error in https://github.com/tensorflow/tensorflow/issues/105654).

Observed on TF 2.21 / Keras 3.15 (CPU): no error; `train_step` runs in Python once per batch (7 per
epoch) and the evaluated loss falls from 1.22 to 1.14 over 5 epochs."""
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
model.compile(optimizer="adam", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
              run_eagerly=True)
before = model.evaluate(x_train, y_train, verbose=0)
model.fit(x_train, y_train, batch_size=32, epochs=5, verbose=0)
print("loss before", before, "after", model.evaluate(x_train, y_train, verbose=0))

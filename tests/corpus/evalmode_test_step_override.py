# expect: TL602
"""A Keras model that overrides `test_step` by copying its `train_step` forward pass, `self(x,
training=True)`, so `evaluate()` and the validation of `fit()` run Dropout and BatchNorm in training mode
(tensorflow/tensorflow#33771: validation numbers that only make sense with `training=False`).

Observed on TF 2.21 (CPU): `evaluate()` (batches of 8) reports accuracy 0.780 and 0.713 over two runs,
against 0.810 and 0.807 for the same model called with `training=False`."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
tf.random.set_seed(2)
x = rng.normal(size=(1500, 12)).astype("float32")
y = (np.sin(x[:, 0]) + x[:, 1] * x[:, 2] > 0).astype("int64")


class Classifier(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.norm = tf.keras.layers.BatchNormalization()
        self.drop = tf.keras.layers.Dropout(0.5)
        self.out = tf.keras.layers.Dense(2)
        self.loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.loss_tracker = tf.keras.metrics.Mean(name="loss")
        self.accuracy = tf.keras.metrics.SparseCategoricalAccuracy(name="accuracy")

    def call(self, inputs, training=False):
        h = self.norm(self.hidden(inputs), training=training)
        return self.out(self.drop(h, training=training))

    @property
    def metrics(self):
        return [self.loss_tracker, self.accuracy]

    def train_step(self, data):
        xb, yb = data
        with tf.GradientTape() as tape:
            logits = self(xb, training=True)
            loss = self.loss_fn(yb, logits)
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.trainable_variables))
        self.loss_tracker.update_state(loss)
        self.accuracy.update_state(yb, logits)
        return {m.name: m.result() for m in self.metrics}

    def test_step(self, data):
        xb, yb = data
        logits = self(xb, training=True)
        self.loss_tracker.update_state(self.loss_fn(yb, logits))
        self.accuracy.update_state(yb, logits)
        return {m.name: m.result() for m in self.metrics}


model = Classifier()
model.compile(optimizer=tf.keras.optimizers.Adam(2e-3))
model.fit(x[:1200], y[:1200], batch_size=32, epochs=5, verbose=0)
reported = model.evaluate(x[1200:], y[1200:], batch_size=8, verbose=0, return_dict=True)
inference = model(x[1200:], training=False)
print(f"evaluate(): accuracy {reported['accuracy']:.3f}, loss {reported['loss']:.3f}; "
      f"training=False: accuracy {float(np.mean(np.argmax(inference, axis=1) == y[1200:])):.3f}")

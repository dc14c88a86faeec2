# expect: none
"""A traced step that keeps an exponential moving average of the loss in a tf.Variable created lazily on
the first trace, guarded by `if self.ema is None:` (the singleton pattern of the TF guide, and the fix
discussed in https://github.com/tensorflow/tensorflow/issues/26812).

Observed on TF 2.21 (CPU): no error; the loss falls from 7.13 to 3.5e-05 over 60 steps and the moving
average follows it (0.71 after the first step, 0.011 at the end)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
features = rng.normal(size=(128, 6)).astype("float32")
targets = (features @ rng.normal(size=(6, 1))).astype("float32")


class Trainer(tf.Module):
    def __init__(self):
        super().__init__()
        self.model = tf.keras.Sequential([tf.keras.Input(shape=(6,)), tf.keras.layers.Dense(1)])
        self.optimizer = tf.keras.optimizers.SGD(0.05)
        self.ema = None

    @tf.function
    def train_step(self, x, y):
        if self.ema is None:
            self.ema = tf.Variable(0.0, trainable=False)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self.model(x, training=True)))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.model.trainable_variables))
        self.ema.assign(0.9 * self.ema + 0.1 * loss)
        return loss


trainer = Trainer()
for step in range(60):
    loss = trainer.train_step(features, targets)
    if step in (0, 59):
        print(step, "loss", float(loss), "moving average", float(trainer.ema))

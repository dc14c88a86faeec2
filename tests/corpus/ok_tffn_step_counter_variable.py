# expect: none
"""The corrected form of tffn_step_counter_attribute.py: the step counter is a tf.Variable advanced with
`assign_add`, and the warm-up factor is computed from it in the graph (the fix for
https://github.com/tensorflow/tensorflow/issues/31362). The per-head losses go to a list local to the
step.

Observed on TF 2.21 (CPU): after 40 calls `trainer.step` is 40 and the warm-up factor reaches 1.0."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(10)
features = rng.normal(size=(1280, 6)).astype("float32")
targets = (features @ rng.normal(size=(6, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(32)


class Trainer:
    def __init__(self):
        self.model = tf.keras.Sequential([tf.keras.Input(shape=(6,)), tf.keras.layers.Dense(1)])
        self.optimizer = tf.keras.optimizers.SGD(0.1)
        self.step = tf.Variable(0, dtype=tf.int64, trainable=False)
        self.warmup_steps = 20

    @tf.function
    def train_step(self, x, y):
        self.step.assign_add(1)
        warmup = tf.minimum(1.0, tf.cast(self.step, tf.float32) / self.warmup_steps)
        with tf.GradientTape() as tape:
            losses = []
            losses.append(tf.reduce_mean(tf.square(y - self.model(x, training=True))))
            loss = tf.add_n(losses)
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip([g * warmup for g in grads], self.model.trainable_variables))
        return loss, warmup


trainer = Trainer()
for x, y in dataset:
    loss, warmup = trainer.train_step(x, y)
print(f"steps counted {int(trainer.step)}, warm-up factor {float(warmup)}, loss {float(loss):.3f}")

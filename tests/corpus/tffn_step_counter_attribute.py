# expect: TL401
"""A trainer that counts its steps in a Python int on `self` inside the traced step and uses it for a
learning-rate warm-up (the report https://github.com/tensorflow/tensorflow/issues/31362: "Non-tensorflow
code gets executed only on the first run of tf.function", a counter on an object).

Observed on TF 2.21 (CPU): after 40 calls `trainer.step` is 1 (it was incremented once, while
tracing), and the warm-up factor baked into the graph stays at 0.05 for every step."""
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
        self.step = 0
        self.warmup_steps = 20

    @tf.function
    def train_step(self, x, y):
        self.step += 1
        warmup = min(1.0, self.step / self.warmup_steps)
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(y - self.model(x, training=True)))
        grads = tape.gradient(loss, self.model.trainable_variables)
        self.optimizer.apply_gradients(zip([g * warmup for g in grads], self.model.trainable_variables))
        return loss, warmup


trainer = Trainer()
for x, y in dataset:
    loss, warmup = trainer.train_step(x, y)
print(f"steps counted {trainer.step}, warm-up factor {warmup}, loss {float(loss):.3f}")

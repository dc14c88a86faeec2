# expect: none
"""A trainer object that accumulates gradients over `k` steps in one non-trainable variable per
weight (the design discussed in tensorflow/tensorflow#47578 and tensorflow/addons#2260) and zeroes
them right after each application (the near miss of accum_trainer_attribute_sums.py).

Observed on TF 2.21 (CPU): it trains; the loss falls 0.098, 0.063, ... 0.058 over ten epochs and the
applied sum's norm from 0.94 to 0.21."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(2)
rng = np.random.default_rng(2)
x = rng.normal(size=(384, 6)).astype("float32")
y = np.sin(x[:, :1]) + 0.5 * x[:, 1:2]


class AccumulatingTrainer:
    def __init__(self, model, learning_rate, k):
        self.model = model
        self.k = k
        self.optimizer = tf.keras.optimizers.SGD(learning_rate, momentum=0.5)
        self.sums = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

    @tf.function
    def accumulate(self, xb, yb):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(self.model(xb, training=True) - yb))
        grads = tape.gradient(loss, self.model.trainable_variables)
        for i in range(len(self.sums)):
            self.sums[i].assign_add(grads[i] / self.k)
        return loss

    def apply(self):
        self.optimizer.apply_gradients(zip(self.sums, self.model.trainable_variables))
        norm = float(tf.linalg.global_norm(self.sums))
        for total in self.sums:
            total.assign(tf.zeros_like(total))
        return norm

    def fit(self, xs, ys, epochs):
        dataset = tf.data.Dataset.from_tensor_slices((xs, ys.astype("float32"))).batch(16)
        for epoch in range(epochs):
            for step, (xb, yb) in enumerate(dataset):
                self.accumulate(xb, yb)
                if (step + 1) % self.k == 0:
                    norm = self.apply()
            loss = float(tf.reduce_mean(tf.square(self.model(xs) - ys)))
            print(epoch, "loss", round(loss, 3), "applied norm", round(norm, 2))


model = tf.keras.Sequential([tf.keras.Input((6,)), tf.keras.layers.Dense(32, activation="tanh"),
                             tf.keras.layers.Dense(1)])
AccumulatingTrainer(model, 0.02, k=4).fit(x, y, epochs=10)

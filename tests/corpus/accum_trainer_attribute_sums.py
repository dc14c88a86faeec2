# expect: TL011
"""A trainer object that keeps one non-trainable variable per weight to accumulate gradients over
`k` steps (the design discussed in tensorflow/tensorflow#47578 and tensorflow/addons#2260,
`self.gradient_accumulation = [tf.Variable(tf.zeros_like(v), trainable=False) ...]`), whose apply
method forgets to zero them.

Observed on TF 2.21 (CPU): the loss diverges, 0.46, 0.24, 0.56, 1.3, 3.3, ... 75.6, 80.8 over ten
epochs, and the applied sum's global norm grows from 4.2 to 95; zeroing the variables after each
application (ok_accum_trainer_sums_zeroed.py) brings the loss to 0.058 with an applied norm of 0.21."""
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
        return float(tf.linalg.global_norm(self.sums))

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

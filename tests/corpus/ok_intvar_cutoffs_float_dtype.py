# expect: none
"""The ordinal-regression cutoffs of tensorflow/tensorflow#73631 declared from integers but with
`dtype=tf.float32`, so they are float variables and train.

Observed on TF 2.21 (CPU): the loss falls from 0.1258 to 0.1230 in 20 epochs and the cutoffs move from
[1 2 3] to [1.05 2.03 3.04]."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
scores = rng.uniform(0.0, 4.0, size=(256,)).astype("float32")
grades = np.floor(scores + rng.normal(scale=0.3, size=(256,))).clip(0, 3).astype("float32")


class OrdinalTrainer:
    def __init__(self):
        self.cutoffs = tf.Variable(np.arange(1, 4), dtype=tf.float32, name="cutoffs")
        self.optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def update(self, s, target):
        with tf.GradientTape() as tape:
            soft = tf.sigmoid(4.0 * (s[:, None] - self.cutoffs))
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(soft, axis=1) - target))
        grads = tape.gradient(loss, [self.cutoffs])
        self.optimizer.apply_gradients(zip(grads, [self.cutoffs]))
        return loss


trainer = OrdinalTrainer()
for epoch in range(20):
    loss = trainer.update(scores, grades)
    if epoch % 5 == 0 or epoch == 19:
        print(epoch, float(loss))
print("cutoffs", trainer.cutoffs.numpy())

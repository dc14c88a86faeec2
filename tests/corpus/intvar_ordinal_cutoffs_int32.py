# expect: TL009
"""An ordinal-regression head whose cutoffs are declared `dtype=tf.int32` (rounded thresholds), held by a
small trainer class and stepped in a `tf.function` (the setting of tensorflow/tensorflow#73631, "Unable to
train/take gradient of integer variable under any condition").

Observed on TF 2.21 (CPU): `tape.gradient` returns [None] for the cutoffs and `apply_gradients` raises
`ValueError: No gradients provided for any variable.`"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
scores = rng.uniform(0.0, 4.0, size=(256,)).astype("float32")
grades = np.floor(scores + rng.normal(scale=0.3, size=(256,))).clip(0, 3).astype("float32")


class OrdinalTrainer:
    def __init__(self):
        self.cutoffs = tf.Variable([1, 2, 3], dtype=tf.int32, name="cutoffs")
        self.optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def update(self, s, target):
        with tf.GradientTape() as tape:
            soft = tf.sigmoid(4.0 * (s[:, None] - tf.cast(self.cutoffs, tf.float32)))
            loss = tf.reduce_mean(tf.square(tf.reduce_sum(soft, axis=1) - target))
        grads = tape.gradient(loss, [self.cutoffs])
        self.optimizer.apply_gradients(zip(grads, [self.cutoffs]))
        return loss


trainer = OrdinalTrainer()
for epoch in range(20):
    print(epoch, float(trainer.update(scores, grades)))

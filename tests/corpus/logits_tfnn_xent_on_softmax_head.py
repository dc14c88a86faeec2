# expect: TL101
"""Low-level MNIST-style loop: the head already applies softmax, and the loss helper hands that output to
`tf.nn.sparse_softmax_cross_entropy_with_logits`, which applies softmax a second time."""
import numpy as np
import tensorflow as tf


class Mlp(tf.keras.Model):
    def __init__(self, classes):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation=tf.nn.relu)
        self.classify = tf.keras.layers.Dense(classes, activation=tf.nn.softmax)

    def call(self, x):
        return self.classify(self.hidden(x))


def xent(outputs, labels):
    return tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=outputs))


mlp = Mlp(10)
opt = tf.keras.optimizers.SGD(0.1)
data = tf.data.Dataset.from_tensor_slices(
    (np.random.rand(256, 20).astype("float32"), np.random.randint(0, 10, 256))
).batch(32)

for x, y in data:
    with tf.GradientTape() as tape:
        loss = xent(mlp(x), y)
    grads = tape.gradient(loss, mlp.trainable_variables)
    opt.apply_gradients(zip(grads, mlp.trainable_variables))

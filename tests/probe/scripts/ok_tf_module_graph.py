# expect: none
"""A correct low-level loop in the tf.Module style: a two-layer MLP whose weights are plain tf.Variables held
by a tf.Module, a @tf.function step, a hand-written softmax cross-entropy on logits, Keras SGD."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

rng = np.random.default_rng(30)
x = rng.normal(size=(64, 6)).astype("float32")
y = rng.integers(0, 3, size=64)


class MLP(tf.Module):
    def __init__(self):
        super().__init__()
        self.w1 = tf.Variable(tf.random.normal((6, 16), stddev=0.4, seed=1))
        self.b1 = tf.Variable(tf.zeros((16,)))
        self.w2 = tf.Variable(tf.random.normal((16, 3), stddev=0.4, seed=2))
        self.b2 = tf.Variable(tf.zeros((3,)))

    def __call__(self, inputs):
        return tf.matmul(tf.nn.tanh(tf.matmul(inputs, self.w1) + self.b1), self.w2) + self.b2


model = MLP()
optimizer = keras.optimizers.SGD(learning_rate=0.1)


@tf.function
def train_step(inputs, labels):
    with tf.GradientTape() as tape:
        logits = model(inputs)
        loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=labels, logits=logits))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(20):
    train_step(x, y)

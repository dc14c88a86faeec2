# expect: none
"""A Keras layer with raw `tf.Variable`s trained by a loop that differentiates the attributes themselves
(`tape.gradient(loss, [layer.w, layer.b])`): the tape watches every trainable `tf.Variable` it reads,
tracked or not, so this trains even on Keras 3 (contrast with the untracked variables of
https://github.com/keras-team/keras/issues/16797, which only matter to the weight lists).

Observed on TF 2.21 (CPU): the loss falls from 34.4 to 1e-12 in 100 steps."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 3)).astype("float32")
y_train = (x_train @ np.array([[2.0], [-3.0], [1.0]], "float32") + 5.0).astype("float32")


class Linear(tf.keras.layers.Layer):
    def __init__(self, units, input_dim):
        super().__init__()
        self.w = tf.Variable(tf.random.normal((input_dim, units), stddev=0.05))
        self.b = tf.Variable(tf.zeros((units,)))

    def call(self, x):
        return tf.matmul(x, self.w) + self.b


layer = Linear(1, 3)
optimizer = tf.keras.optimizers.SGD(0.1)
for step in range(100):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(layer(x_train) - y_train))
    params = [layer.w, layer.b]
    grads = tape.gradient(loss, params)
    optimizer.apply_gradients(zip(grads, params))
    if step % 25 == 0 or step == 99:
        print(step, float(loss))

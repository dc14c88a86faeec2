# expect: none
"""A correct linear regression on plain, unnamed `tf.Variable`s, the TF "Basic training loops" guide's style.
Every unnamed variable is called "Variable", and issue 12 measured the probe keying them by that name: counts
were wrong. Expected: nothing, and the report names them `w` and `b`."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(2)
x = rng.normal(size=(128, 3)).astype("float32")
y = (x @ np.array([[2.0], [-1.0], [0.5]], "float32") + 0.3).astype("float32")
w = tf.Variable(tf.random.normal((3, 1), seed=1))
b = tf.Variable(tf.zeros((1,)))
optimizer = tf.keras.optimizers.SGD(learning_rate=0.01)

for step in range(20):
    with tf.GradientTape() as tape:
        pred = tf.matmul(x, w) + b
        loss = tf.reduce_mean(tf.square(y - pred))
    grads = tape.gradient(loss, [w, b])
    optimizer.apply_gradients(zip(grads, [w, b]))

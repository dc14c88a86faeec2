# expect: TL807
"""Plain unnamed `tf.Variable`s, gradients taken for [b, w], but only `w`'s is applied: `b` never changes.
Issue 12 measured that with variables keyed by their name ("Variable" for both) the list order decided whether
TL807 fired. On TF 2.21 CPU: both gradients non-zero, `b` unchanged after every step. Expected: TL807 naming
`b`, whichever order the list has."""
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
    grads = dict(zip(["b", "w"], tape.gradient(loss, [b, w])))
    optimizer.apply_gradients([(grads["w"], w)])

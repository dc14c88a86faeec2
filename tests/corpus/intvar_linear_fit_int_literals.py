# expect: TL009
"""Fitting a line with two scalar variables initialised from Python ints, so both are int32 and the
tape has nothing to differentiate (the pattern of tensorflow/tensorflow#27378, "Your variables are of
integer types (because you initialize them with integers)").

Observed on TF 2.21 (CPU): `tape.gradient` returns [None, None] and `apply_gradients` raises
`ValueError: No gradients provided for any variable.` on the first step."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.uniform(-1.0, 1.0, size=(256,)).astype("float32")
y = (2.5 * x + 0.7 + rng.normal(scale=0.05, size=(256,))).astype("float32")

slope = tf.Variable(1)
intercept = tf.Variable(0)
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)

for step in range(50):
    with tf.GradientTape() as tape:
        pred = tf.cast(slope, tf.float32) * x + tf.cast(intercept, tf.float32)
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, [slope, intercept])
    optimizer.apply_gradients(zip(grads, [slope, intercept]))
    if step % 10 == 0:
        print(step, float(loss))

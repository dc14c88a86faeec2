# expect: TL502
"""A GradientTape loop ported from a TF 1 eager tutorial (tensorflow/docs `site/en/r1/guide/eager.ipynb`):
a `tf.keras.Sequential` trained with `tf.compat.v1.train.AdamOptimizer().apply_gradients(...)`. TF 1's
optimizers are no Keras optimizers (google/eng-edu#68: "The original call to optimizer
tf.train.AdamOptimizer(0.001) is throwing an error"), and on Keras 3 they do not take Keras variables
either (keras-team/keras#19874 reports the ValueError that `minimize` gives).

Observed on TF 2.21 / Keras 3.15 (CPU): the first `apply_gradients` raises AttributeError: 'Variable'
object has no attribute '_unique_id' (the optimizer makes its slot variables from Keras 3 variables);
`minimize(..., var_list=model.trainable_variables)` raises ValueError: Passed in object <Variable
path=sequential/dense/kernel, ...> of type 'Variable', not tf.Tensor or tf.Variable or ExtensionType. The
same loop with `tf.keras.optimizers.Adam(1e-2)` runs, the loss falling from 18.7 to 15.4 over 30 steps (seeded)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(128, 4)).astype("float32")
y = (x @ np.array([[1.0], [-2.0], [0.5], [3.0]], dtype="float32")).astype("float32")

model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
optimizer = tf.compat.v1.train.AdamOptimizer(1e-2)

for step in range(30):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 10 == 0:
        print(step, float(loss))

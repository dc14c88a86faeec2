# expect: none
"""Clipping left to the optimizer (`global_clipnorm=`), with `tf.clip_by_global_norm` used only to log the
norm: the clipped list is dropped on purpose, as `_` (a near miss for TL008; the pattern of
tensorflow/tensorflow#36001, which asked optimizers to clip by global norm themselves).

Observed on TF 2.21 (CPU): the logged norm is 242, 238, 235; the optimizer clips each update to norm 5,
so the loss falls slowly (142 -> 139) instead of jumping as in clip_result_never_applied.py."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.normal(size=(128, 16)).astype("float32") * 10.0
targets = rng.normal(size=(128, 1)).astype("float32") * 10.0

model = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(1e-3, global_clipnorm=5.0)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    gradients = tape.gradient(loss, model.trainable_variables)
    _, global_norm = tf.clip_by_global_norm(gradients, 5.0)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    return loss, global_norm


for epoch in range(3):
    loss, norm = train_step(features, targets)
    print(epoch, float(loss), "logged global norm", float(norm))

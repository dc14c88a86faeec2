# expect: none
"""Gradient accumulation into non-trainable `tf.Variable`s, applied every 4 steps and zeroed right after
each application, as the answer to https://stackoverflow.com/questions/42156957 does with its
`zero_ops` (the near miss of accum_variables_never_zeroed.py).

Observed on TF 2.21 (CPU): it trains; the loss falls 5.3, 1.9, 0.40, 0.14, 0.077, 0.055 and the
applied update's norm shrinks from 0.27 to 0.017 over 40 applications."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(256, 8)).astype("float32")
y = (x @ rng.normal(size=(8, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(32)

model = tf.keras.Sequential([tf.keras.Input((8,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.SGD(0.05)
accum_steps = 4
accumulators = [tf.Variable(tf.zeros_like(v), trainable=False) for v in model.trainable_variables]

step = 0
for epoch in range(20):
    for xb, yb in dataset:
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(xb, training=True) - yb))
        grads = tape.gradient(loss, model.trainable_variables)
        for acc, g in zip(accumulators, grads):
            acc.assign_add(g / accum_steps)
        step += 1
        if step % accum_steps == 0:
            before = [v.numpy() for v in model.trainable_variables]
            optimizer.apply_gradients(zip(accumulators, model.trainable_variables))
            for acc in accumulators:
                acc.assign(tf.zeros_like(acc))
            update = np.sqrt(sum(((b - v.numpy()) ** 2).sum() for b, v in zip(before, model.trainable_variables)))
            if (step // accum_steps) in (1, 2) or (step // accum_steps) % 8 == 0:
                print(step // accum_steps, "loss", round(float(loss), 3), "update norm", round(float(update), 4))

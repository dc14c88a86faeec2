# expect: none
"""Gradient accumulation in a Python list, the loop asked about in
https://stackoverflow.com/questions/46772685 and tensorflow/tensorflow#47578, with a new list built
after each application (the near miss of accum_list_sum_never_cleared.py).

Observed on TF 2.21 (CPU): it trains; the loss on all data falls 6.6, 0.89, 0.30, ... 0.09 over 15
epochs and the applied mean gradient's norm from 7.5 to 0.39."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(1)
rng = np.random.default_rng(1)
x = rng.normal(size=(512, 10)).astype("float32")
targets = (x @ rng.normal(size=(10, 1)) + 0.1 * rng.normal(size=(512, 1))).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((x, targets)).shuffle(512, seed=1).batch(32)

model = tf.keras.Sequential([tf.keras.Input((10,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(1)])
loss_fn = tf.keras.losses.MeanSquaredError()
optimizer = tf.keras.optimizers.SGD(0.05)
k = 4


@tf.function
def gradients(xb, yb):
    with tf.GradientTape() as tape:
        loss = loss_fn(yb, model(xb, training=True))
    return loss, tape.gradient(loss, model.trainable_variables)


accum = [tf.zeros_like(v) for v in model.trainable_variables]
for epoch in range(15):
    for step, (xb, yb) in enumerate(dataset):
        loss, grads = gradients(xb, yb)
        accum = [a + g for a, g in zip(accum, grads)]
        if (step + 1) % k == 0:
            mean_grads = [a / k for a in accum]
            optimizer.apply_gradients(zip(mean_grads, model.trainable_variables))
            accum = [tf.zeros_like(v) for v in model.trainable_variables]
    full_loss = float(loss_fn(targets, model(x)))
    print(epoch, "loss on all data", round(full_loss, 3),
          "applied norm", round(float(tf.linalg.global_norm(mean_grads)), 2))

# expect: TL011
"""Gradient accumulation in a Python list, the "sum the gradients of k batches, then apply their mean"
loop asked about in https://stackoverflow.com/questions/46772685 and tensorflow/tensorflow#47578,
written without starting a new sum after each application.

Observed on TF 2.21 (CPU): the mean gradient it applies has a global norm of 26 after epoch 1 and 33
after epoch 15, and the loss on all data never settles (1.9, 14.1, 10.1, ... 3.4, 4.9); with a new
list after each application (ok_accum_list_rebuilt.py) the applied norm falls from 7.5 to 0.39 and
the loss from 6.6 to 0.09."""
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
    full_loss = float(loss_fn(targets, model(x)))
    print(epoch, "loss on all data", round(full_loss, 3),
          "applied norm", round(float(tf.linalg.global_norm(mean_grads)), 2))

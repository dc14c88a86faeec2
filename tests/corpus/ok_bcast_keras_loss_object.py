# expect: none
"""Near miss of TL110: 1-D targets and a `Dense(1)` output given to `keras.losses.MeanSquaredError()`, which
squeezes or expands `y_true` to the rank of `y_pred` (why `fit` works where the hand-written loop of
tensorflow/tensorflow#28901 did not).

Observed on TF 2.21 (CPU): the loss object returns the aligned MSE (the same value as with `y[:, None]`);
over 8 epochs of 32-sample batches from a `tf.data` pipeline the last batch's loss goes 0.31 -> 0.2-0.3
and R^2 = 0.60 (the broadcast hand-written loss of bcast_tf_data_absolute_error.py, same data and
model: 0.02)."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(1)
features = rng.uniform(-1, 1, size=(512, 4)).astype("float32")
targets = (np.sin(3 * features[:, 0]) + features[:, 1] * features[:, 2]).astype("float32")

dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(512, seed=0).batch(32)
model = tf.keras.Sequential([
    tf.keras.Input((4,)),
    tf.keras.layers.Dense(64, activation="tanh"),
    tf.keras.layers.Dense(1),
])
loss_fn = tf.keras.losses.MeanSquaredError()
optimizer = tf.keras.optimizers.Adam(3e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        prediction = model(x, training=True)
        loss = loss_fn(y, prediction)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(8):
    for x_batch, y_batch in dataset:
        loss = train_step(x_batch, y_batch)
    print(epoch, round(float(loss), 3))

final = model(features).numpy()[:, 0]
r2 = 1 - np.mean((targets - final) ** 2) / np.var(targets)
print("R^2", round(float(r2), 3))

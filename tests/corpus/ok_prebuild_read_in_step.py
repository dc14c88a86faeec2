# expect: none
"""prebuild_manual_sgd_weights.py reading `model.trainable_weights` inside the step, after the forward pass
(as the custom-loop guides do; the empty list of https://github.com/tensorflow/tensorflow/issues/26948 is
only empty before the first call).

Observed on TF 2.21 (CPU): 4 weights are updated; the loss falls 0.141, 0.035, 0.030, 0.025, 0.021, 0.017 over 50 epochs
(the TL306 version stays at 0.14)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)

rng = np.random.default_rng(2)
x_train = rng.normal(size=(256, 3)).astype("float32")
y_train = np.tanh(x_train @ np.array([[1.0], [-1.0], [0.5]], "float32"))

model = tf.keras.Sequential()
model.add(tf.keras.layers.Dense(16, activation="tanh"))
model.add(tf.keras.layers.Dense(1))


def sgd_step(x, y, lr=0.2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    weights = model.trainable_weights
    grads = tape.gradient(loss, weights)
    for g, w in zip(grads, weights):
        w.assign_sub(lr * g)
    return loss


for epoch in range(50):
    loss = sgd_step(x_train, y_train)
    if epoch % 10 == 0 or epoch == 49:
        print(epoch, round(float(loss), 3), "weights", len(model.trainable_weights))

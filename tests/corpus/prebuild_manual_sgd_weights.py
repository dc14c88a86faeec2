# expect: TL306
"""Hand-written SGD over a weight list taken from a Sequential model built with `add()` and no input shape
(https://github.com/tensorflow/tensorflow/issues/26948): the list is empty, so the update loop runs zero
times and nothing ever changes. No error is raised.

Observed on TF 2.21 (CPU): the saved list has 0 weights; the loss is identical at every epoch
(0.14 at all 5 epochs)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)

rng = np.random.default_rng(2)
x_train = rng.normal(size=(256, 3)).astype("float32")
y_train = np.tanh(x_train @ np.array([[1.0], [-1.0], [0.5]], "float32"))

model = tf.keras.Sequential()
model.add(tf.keras.layers.Dense(16, activation="tanh"))
model.add(tf.keras.layers.Dense(1))
weights = model.trainable_weights
print("saved weights:", len(weights))


def sgd_step(x, y, lr=0.2):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x) - y))
    grads = tape.gradient(loss, weights)
    for g, w in zip(grads, weights):
        w.assign_sub(lr * g)
    return loss


for epoch in range(5):
    loss = sgd_step(x_train, y_train)
    print(epoch, round(float(loss), 2))

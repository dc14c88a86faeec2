# expect: none
"""Near miss of TL307: a logistic regression (one `Dense(1, activation="sigmoid")` layer) started from zero
weights. With a single layer there are no hidden units to keep symmetric and the loss is convex, so zero
is a fine start (as the maintainer of wagonhelm/NaNmnist#2 notes for single-layer perceptrons).

Observed on TF 2.21 (CPU): loss 0.693 -> 0.127 in 150 steps, accuracy 0.988."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(3)
x = rng.normal(size=(512, 5)).astype("float32")
y = (x @ np.array([1.5, -2.0, 0.5, 0.0, 1.0]) > 0).astype("float32")[:, None]

model = tf.keras.Sequential([
    tf.keras.Input((5,)),
    tf.keras.layers.Dense(1, activation="sigmoid", kernel_initializer=tf.keras.initializers.Zeros()),
])
optimizer = tf.keras.optimizers.SGD(0.5)
loss_fn = tf.keras.losses.BinaryCrossentropy()

for step in range(150):
    with tf.GradientTape() as tape:
        probabilities = model(x, training=True)
        loss = loss_fn(y, probabilities)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 50 == 0 or step == 149:
        accuracy = float(np.mean((probabilities.numpy() > 0.5) == y))
        print(step, round(float(loss), 3), "accuracy", round(accuracy, 3))

# expect: none
"""A regression loop that keeps a running mean of the model's outputs in a non-trainable variable,
updated with `assign` inside the tape; the loss never reads it (the BatchNorm-like statistic that is the
near miss of the assign reports in keras-team/keras#16128).

Observed on TF 2.21 (CPU): the loss falls from 5.83 to 0.093 in 60 steps; the running mean ends at 0.33."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(6)
x = rng.normal(size=(256, 4)).astype("float32")
y = (x @ np.array([[1.0], [-2.0], [0.5], [0.0]]) + 0.3).astype("float32")

model = tf.keras.Sequential([tf.keras.Input(shape=(4,)), tf.keras.layers.Dense(16, activation="relu"),
                             tf.keras.layers.Dense(1)])
output_mean = tf.Variable(0.0, trainable=False)
optimizer = tf.keras.optimizers.Adam(1e-2)


@tf.function
def train_step(features, targets):
    with tf.GradientTape() as tape:
        pred = model(features, training=True)
        output_mean.assign(0.9 * output_mean + 0.1 * tf.reduce_mean(pred))
        loss = tf.reduce_mean(tf.square(pred - targets))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for step in range(60):
    loss = train_step(x, y)
    if step % 20 == 0 or step == 59:
        print(step, float(loss))
print("running mean of outputs", float(output_mean))

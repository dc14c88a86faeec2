# expect: none
"""An encoder and a decoder trained by one `Adam` in one update over the concatenated variable lists: the
correct way to share one optimizer between two models (contrast with
https://github.com/lovedlim/tensorflow/issues/40, where one optimizer is applied to two models in turn).

Observed on TF 2.21 (CPU): trains without error; reconstruction loss 0.85 -> 0.17 over 20 epochs."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
data = rng.normal(size=(512, 4)).astype("float32") @ rng.normal(size=(4, 16)).astype("float32")
data /= data.std()

encoder = tf.keras.Sequential([tf.keras.Input((16,)), tf.keras.layers.Dense(32, activation="relu"),
                               tf.keras.layers.Dense(4)])
decoder = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(32, activation="relu"),
                               tf.keras.layers.Dense(16)])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(decoder(encoder(x, training=True), training=True) - x))
    variables = encoder.trainable_variables + decoder.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


dataset = tf.data.Dataset.from_tensor_slices(data).shuffle(512).batch(64)
for epoch in range(20):
    for batch in dataset:
        loss = train_step(batch)
    if epoch % 5 == 0 or epoch == 19:
        print(epoch, float(loss))

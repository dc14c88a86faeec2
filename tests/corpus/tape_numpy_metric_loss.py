# expect: TL004
"""Autoencoder whose reconstruction error is computed in NumPy inside the tape."""
import numpy as np
import tensorflow as tf

encoder = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(8)])
decoder = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"), tf.keras.layers.Dense(784)])
optimizer = tf.keras.optimizers.Adam(1e-3)


def reconstruction_error(batch, reconstruction):
    diff = batch - reconstruction.numpy()
    return np.mean(diff ** 2)


def train_step(batch):
    with tf.GradientTape() as tape:
        reconstruction = decoder(encoder(batch, training=True), training=True)
        loss = tf.convert_to_tensor(reconstruction_error(batch, reconstruction))
    variables = encoder.trainable_variables + decoder.trainable_variables
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))
    return loss


(x_train, _), _ = tf.keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
for i in range(0, 1024, 128):
    print(train_step(x_train[i:i + 128]))

# expect: none
"""A correct loop: a small dense VAE (encoder to mean and log-variance, the reparameterisation trick, a sigmoid
decoder) with a reconstruction plus KL loss, written out by hand, eager steps."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(24)
rng = np.random.default_rng(24)
data = (rng.uniform(size=(64, 32)) > 0.5).astype("float32")

encoder = keras.Sequential([keras.Input((32,)), keras.layers.Dense(32, activation="relu"), keras.layers.Dense(8)])
decoder = keras.Sequential([keras.Input((4,)), keras.layers.Dense(32, activation="relu"),
                            keras.layers.Dense(32, activation="sigmoid")])
reconstruction_loss = keras.losses.BinaryCrossentropy()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
variables = encoder.trainable_variables + decoder.trainable_variables

for step in range(20):
    with tf.GradientTape() as tape:
        mean, log_var = tf.split(encoder(data, training=True), 2, axis=-1)
        z = mean + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mean), seed=step)
        reconstruction = decoder(z, training=True)
        kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1 + log_var - tf.square(mean) - tf.exp(log_var), axis=-1))
        loss = reconstruction_loss(data, reconstruction) + 0.01 * kl
    grads = tape.gradient(loss, variables)
    optimizer.apply_gradients(zip(grads, variables))

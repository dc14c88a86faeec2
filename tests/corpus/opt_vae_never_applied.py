# expect: TL001
"""A small VAE whose custom loop computes the gradients and logs the loss but never applies them."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

LATENT = 4


class Sampling(keras.layers.Layer):
    def call(self, inputs):
        mean, log_var = inputs
        eps = tf.random.normal(tf.shape(mean))
        return mean + tf.exp(0.5 * log_var) * eps


def build_encoder():
    inputs = keras.Input(shape=(32,))
    h = keras.layers.Dense(16, activation="relu")(inputs)
    mean = keras.layers.Dense(LATENT)(h)
    log_var = keras.layers.Dense(LATENT)(h)
    z = Sampling()([mean, log_var])
    return keras.Model(inputs, [mean, log_var, z])


def build_decoder():
    inputs = keras.Input(shape=(LATENT,))
    h = keras.layers.Dense(16, activation="relu")(inputs)
    return keras.Model(inputs, keras.layers.Dense(32)(h))


encoder = build_encoder()
decoder = build_decoder()
optimizer = keras.optimizers.Adam(learning_rate=1e-3)
data = np.random.default_rng(0).normal(size=(256, 32)).astype("float32")


def compute_loss(batch):
    mean, log_var, z = encoder(batch, training=True)
    reconstruction = decoder(z, training=True)
    rec = tf.reduce_mean(tf.reduce_sum(tf.square(batch - reconstruction), axis=1))
    kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1 + log_var - tf.square(mean) - tf.exp(log_var), axis=1))
    return rec + kl


history = []
for epoch in range(3):
    for batch in tf.data.Dataset.from_tensor_slices(data).batch(32):
        with tf.GradientTape() as tape:
            loss = compute_loss(batch)
        variables = encoder.trainable_variables + decoder.trainable_variables
        grads = tape.gradient(loss, variables)
        history.append(float(loss))
    print(epoch, np.mean(history[-8:]), len(grads))

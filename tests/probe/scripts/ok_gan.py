# expect: none
"""A correct loop: a small GAN on 2-D points, a generator and a discriminator each with its own tape and its
own Adam, logits into BinaryCrossentropy(from_logits=True), a @tf.function step."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(25)
rng = np.random.default_rng(25)
real = rng.normal(loc=2.0, scale=0.5, size=(64, 2)).astype("float32")

generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(16, activation="relu"), keras.layers.Dense(2)])
discriminator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(16, activation="relu"),
                                  keras.layers.Dense(1)])
bce = keras.losses.BinaryCrossentropy(from_logits=True)
g_optimizer = keras.optimizers.Adam(learning_rate=1e-3)
d_optimizer = keras.optimizers.Adam(learning_rate=1e-3)


@tf.function
def train_step(points):
    noise = tf.random.normal((64, 4))
    with tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(points, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    d_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    with tf.GradientTape() as g_tape:
        fake_logits = discriminator(generator(noise, training=True), training=True)
        g_loss = bce(tf.ones_like(fake_logits), fake_logits)
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    g_optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
    return d_loss, g_loss


for step in range(20):
    train_step(real)

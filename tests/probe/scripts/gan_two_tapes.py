# expect: none
"""A correct GAN step in the DCGAN tutorial's style: two tapes, one for the generator and one for the
discriminator, two optimizers. Issue 12 measured TL805 comparing the generator's first kernel with the
discriminator's last. Expected: nothing."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(40)
rng = np.random.default_rng(40)
real = rng.normal(loc=2.0, size=(512, 8)).astype("float32")
generator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(32), keras.layers.LeakyReLU(0.2),
                              keras.layers.Dense(32), keras.layers.LeakyReLU(0.2), keras.layers.Dense(8)])
discriminator = keras.Sequential([keras.Input((8,)), keras.layers.Dense(32), keras.layers.LeakyReLU(0.2),
                                  keras.layers.Dense(1)])
bce = keras.losses.BinaryCrossentropy(from_logits=True)
g_opt = keras.optimizers.Adam(1e-4)
d_opt = keras.optimizers.Adam(1e-4)


def train_step(batch):
    noise = tf.random.normal((tf.shape(batch)[0], 4))
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_out = discriminator(batch, training=True)
        fake_out = discriminator(fake, training=True)
        g_loss = bce(tf.ones_like(fake_out), fake_out)
        d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))


for i in range(0, 512, 32):
    train_step(real[i:i + 32])

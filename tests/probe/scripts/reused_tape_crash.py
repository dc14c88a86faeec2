# expect: error
"""A GAN-style step that asks one non-persistent tape for two gradients: the second `tape.gradient` raises
RuntimeError, exactly as the static TL005 predicts. After the DCGAN-tutorial question "A non-persistent
GradientTape can only be used to compute one set of gradients" (Stack Overflow 56916313). Issue 12 measured the
static finding left "not-checked" and a TL807 added for the step the crash cut short; on TF 2.21 CPU the probe
sees one step, which raised. Expected: TL005 confirmed by the error, and no runtime finding."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(3)
rng = np.random.default_rng(3)
real = rng.normal(size=(16, 4)).astype("float32")
generator = keras.Sequential([keras.Input((2,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(4)])
discriminator = keras.Sequential([keras.Input((4,)), keras.layers.Dense(8, activation="relu"), keras.layers.Dense(1)])
g_opt = keras.optimizers.Adam(1e-3)
d_opt = keras.optimizers.Adam(1e-3)
bce = keras.losses.BinaryCrossentropy(from_logits=True)

for step in range(5):
    noise = rng.normal(size=(16, 2)).astype("float32")
    with tf.GradientTape() as tape:
        fake = generator(noise, training=True)
        real_out = discriminator(real, training=True)
        fake_out = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_out), real_out) + bce(tf.zeros_like(fake_out), fake_out)
        g_loss = bce(tf.ones_like(fake_out), fake_out)
    d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
    g_grads = tape.gradient(g_loss, generator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))

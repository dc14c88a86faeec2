# expect: none
"""The 2-D GAN of optshare_gan_one_adam.py written as the DCGAN tutorial does: one `Adam` per network
(the fix asked for in https://github.com/mrosol/Nonlincausality/pull/12 and
https://github.com/eriklindernoren/Keras-GAN/issues/128).

Observed on TF 2.21 (CPU): trains without error; the generated points' mean moves toward the real mean 3.0
(1.23, 1.04 after 6 epochs; 1.84, 2.04 after 10)."""
import numpy as np
import tensorflow as tf

NOISE = 8
rng = np.random.default_rng(0)
real_points = rng.normal(loc=3.0, size=(512, 2)).astype("float32")

generator = tf.keras.Sequential([tf.keras.Input((NOISE,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(1)])
bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
generator_optimizer = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)
discriminator_optimizer = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)


@tf.function
def train_step(real):
    noise = tf.random.normal([tf.shape(real)[0], NOISE])
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        g_loss = bce(tf.ones_like(fake_logits), fake_logits)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    discriminator_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    generator_optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
    return d_loss, g_loss


dataset = tf.data.Dataset.from_tensor_slices(real_points).shuffle(512).batch(32)
for epoch in range(10):
    for batch in dataset:
        d_loss, g_loss = train_step(batch)
    mean = tf.reduce_mean(generator(tf.random.normal([256, NOISE])), axis=0)
    print(epoch, float(d_loss), float(g_loss), mean.numpy())

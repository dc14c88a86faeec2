# expect: TL204
"""A small GAN on 2-D points whose generator and discriminator are stepped by one `Adam` (the
"ValueError - Same optimizer for different data" report, https://github.com/mrosol/Nonlincausality/pull/12,
and the GAN in https://github.com/yzhao062/pyod/issues/459).

Observed on TF 2.21 (CPU): the discriminator's first update builds the optimizer; the generator's update
right after raises `ValueError: Unknown variable: <Variable path=sequential/dense/kernel ...>. This
optimizer can only be called for the variables it was originally built with.` (inside tf.function)."""
import numpy as np
import tensorflow as tf

NOISE = 8
rng = np.random.default_rng(0)
real_points = rng.normal(loc=3.0, size=(256, 2)).astype("float32")

generator = tf.keras.Sequential([tf.keras.Input((NOISE,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(1)])
bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)


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
    optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    optimizer.apply_gradients(zip(g_grads, generator.trainable_variables))
    return d_loss, g_loss


dataset = tf.data.Dataset.from_tensor_slices(real_points).batch(32)
for epoch in range(3):
    for batch in dataset:
        d_loss, g_loss = train_step(batch)
    print(epoch, float(d_loss), float(g_loss))

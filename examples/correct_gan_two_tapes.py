"""A correct GAN step: two models, two tapes, two optimizers, each applied to its own variables.
tapelint reports nothing."""

import tensorflow as tf
from tensorflow import keras

NOISE_DIM = 16


def make_generator():
    return keras.Sequential([
        keras.layers.Input(shape=(NOISE_DIM,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(2),
    ])


def make_discriminator():
    return keras.Sequential([
        keras.layers.Input(shape=(2,)),
        keras.layers.Dense(64, activation="relu"),
        keras.layers.Dense(1),
    ])


generator = make_generator()
discriminator = make_discriminator()
cross_entropy = keras.losses.BinaryCrossentropy(from_logits=True)
generator_optimizer = keras.optimizers.Adam(1e-4)
discriminator_optimizer = keras.optimizers.Adam(1e-4)


def discriminator_loss(real_output, fake_output):
    real_loss = cross_entropy(tf.ones_like(real_output), real_output)
    fake_loss = cross_entropy(tf.zeros_like(fake_output), fake_output)
    return real_loss + fake_loss


def generator_loss(fake_output):
    return cross_entropy(tf.ones_like(fake_output), fake_output)


@tf.function
def train_step(real):
    noise = tf.random.normal([tf.shape(real)[0], NOISE_DIM])
    with tf.GradientTape() as gen_tape, tf.GradientTape() as disc_tape:
        generated = generator(noise, training=True)
        real_output = discriminator(real, training=True)
        fake_output = discriminator(generated, training=True)
        gen_loss = generator_loss(fake_output)
        disc_loss = discriminator_loss(real_output, fake_output)
    gen_gradients = gen_tape.gradient(gen_loss, generator.trainable_variables)
    disc_gradients = disc_tape.gradient(disc_loss, discriminator.trainable_variables)
    generator_optimizer.apply_gradients(zip(gen_gradients, generator.trainable_variables))
    discriminator_optimizer.apply_gradients(zip(disc_gradients, discriminator.trainable_variables))
    return gen_loss, disc_loss


data = tf.random.normal([256, 2]) * 0.5 + 2.0
for epoch in range(2):
    for batch in tf.data.Dataset.from_tensor_slices(data).batch(32):
        g, d = train_step(batch)
    print(f"epoch {epoch}: generator {float(g):.3f}, discriminator {float(d):.3f}")

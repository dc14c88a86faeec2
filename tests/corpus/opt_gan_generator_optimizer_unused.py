# expect: TL001
"""A GAN step in which the generator's optimizer is created but the discriminator's is applied twice."""
import tensorflow as tf

NOISE = 8
generator = tf.keras.Sequential([tf.keras.Input(shape=(NOISE,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(2)])
discriminator = tf.keras.Sequential([tf.keras.Input(shape=(2,)), tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(1)])
bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
generator_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
discriminator_optimizer = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)


@tf.function
def train_step(real):
    noise = tf.random.normal([tf.shape(real)[0], NOISE])
    with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        g_loss = bce(tf.ones_like(fake_logits), fake_logits)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
    g_grads = g_tape.gradient(g_loss, generator.trainable_variables)
    d_grads = d_tape.gradient(d_loss, discriminator.trainable_variables)
    discriminator_optimizer.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    return g_loss, d_loss, g_grads


for step in range(10):
    g_loss, d_loss, _ = train_step(tf.random.normal([32, 2]))

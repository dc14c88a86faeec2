# expect: none
"""WGAN-GP critic step: a nested tape for the gradient penalty on watched interpolates."""
import tensorflow as tf
from tensorflow.keras import layers

LATENT = 128
generator = tf.keras.Sequential([layers.Dense(256, activation="relu", input_shape=(LATENT,)), layers.Dense(784)])
critic = tf.keras.Sequential([layers.Dense(256, input_shape=(784,)), layers.LeakyReLU(0.2), layers.Dense(1)])
c_opt = tf.keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)
g_opt = tf.keras.optimizers.Adam(1e-4, beta_1=0.0, beta_2=0.9)


def gradient_penalty(real, fake):
    alpha = tf.random.uniform((tf.shape(real)[0], 1), 0.0, 1.0)
    interpolated = real + alpha * (fake - real)
    with tf.GradientTape() as gp_tape:
        gp_tape.watch(interpolated)
        pred = critic(interpolated, training=True)
    grads = gp_tape.gradient(pred, [interpolated])[0]
    norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=1) + 1e-12)
    return tf.reduce_mean((norm - 1.0) ** 2)


@tf.function
def train_step(real):
    batch = tf.shape(real)[0]
    for _ in range(5):
        noise = tf.random.normal((batch, LATENT))
        with tf.GradientTape() as tape:
            fake = generator(noise, training=True)
            c_loss = tf.reduce_mean(critic(fake, training=True)) - tf.reduce_mean(critic(real, training=True))
            c_loss += 10.0 * gradient_penalty(real, fake)
        c_grads = tape.gradient(c_loss, critic.trainable_variables)
        c_opt.apply_gradients(zip(c_grads, critic.trainable_variables))
    noise = tf.random.normal((batch, LATENT))
    with tf.GradientTape() as tape:
        g_loss = -tf.reduce_mean(critic(generator(noise, training=True), training=True))
    g_grads = tape.gradient(g_loss, generator.trainable_variables)
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    return c_loss, g_loss


for real in tf.data.Dataset.from_tensor_slices(tf.random.normal((512, 784))).batch(64):
    train_step(real)

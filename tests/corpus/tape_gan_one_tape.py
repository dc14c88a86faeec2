# expect: TL005
"""A GAN step that records both losses on one non-persistent tape and asks it twice."""
import tensorflow as tf
from tensorflow.keras import layers

LATENT = 64

generator = tf.keras.Sequential([
    layers.Dense(128, activation="relu", input_shape=(LATENT,)),
    layers.Dense(784, activation="tanh"),
])
discriminator = tf.keras.Sequential([
    layers.Dense(128, activation="relu", input_shape=(784,)),
    layers.Dense(1),
])
bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)
g_opt = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)
d_opt = tf.keras.optimizers.Adam(2e-4, beta_1=0.5)


@tf.function
def train_step(real):
    noise = tf.random.normal((tf.shape(real)[0], LATENT))
    with tf.GradientTape() as tape:
        fake = generator(noise, training=True)
        real_logits = discriminator(real, training=True)
        fake_logits = discriminator(fake, training=True)
        d_loss = bce(tf.ones_like(real_logits), real_logits) + bce(tf.zeros_like(fake_logits), fake_logits)
        g_loss = bce(tf.ones_like(fake_logits), fake_logits)
    d_grads = tape.gradient(d_loss, discriminator.trainable_variables)
    g_grads = tape.gradient(g_loss, generator.trainable_variables)
    d_opt.apply_gradients(zip(d_grads, discriminator.trainable_variables))
    g_opt.apply_gradients(zip(g_grads, generator.trainable_variables))
    return d_loss, g_loss


(x_train, _), _ = tf.keras.datasets.mnist.load_data()
images = (x_train.reshape(-1, 784).astype("float32") - 127.5) / 127.5
for batch in tf.data.Dataset.from_tensor_slices(images).batch(128):
    train_step(batch)

# expect: TL002 TL204
"""A GAN trainer that makes one optimizer per network but applies the generator's to both: the
discriminator's optimizer (with its own learning rate) is never used. TL204 reports the shared optimizer
(Keras 3 refuses variables an optimizer was not built with); TL002 points at the optimizer that was meant
for the discriminator."""
import numpy as np
import tensorflow as tf

LATENT = 16


class GANTrainer:
    def __init__(self):
        self.generator = tf.keras.Sequential([
            tf.keras.Input((LATENT,)),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(2),
        ])
        self.discriminator = tf.keras.Sequential([
            tf.keras.Input((2,)),
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dense(1),
        ])
        self.g_optimizer = tf.keras.optimizers.Adam(1e-4, beta_1=0.5)
        self.d_optimizer = tf.keras.optimizers.Adam(4e-4, beta_1=0.5)
        self.bce = tf.keras.losses.BinaryCrossentropy(from_logits=True)

    def step(self, real):
        noise = tf.random.normal((tf.shape(real)[0], LATENT))
        with tf.GradientTape() as g_tape, tf.GradientTape() as d_tape:
            fake = self.generator(noise, training=True)
            fake_logits = self.discriminator(fake, training=True)
            real_logits = self.discriminator(real, training=True)
            g_loss = self.bce(tf.ones_like(fake_logits), fake_logits)
            d_loss = self.bce(tf.ones_like(real_logits), real_logits) + self.bce(tf.zeros_like(fake_logits), fake_logits)
        g_grads = g_tape.gradient(g_loss, self.generator.trainable_variables)
        d_grads = d_tape.gradient(d_loss, self.discriminator.trainable_variables)
        self.g_optimizer.apply_gradients(zip(g_grads, self.generator.trainable_variables))
        self.g_optimizer.apply_gradients(zip(d_grads, self.discriminator.trainable_variables))
        return g_loss, d_loss


trainer = GANTrainer()
data = np.random.normal(size=(512, 2)).astype("float32")
for epoch in range(3):
    for start in range(0, len(data), 64):
        trainer.step(data[start:start + 64])

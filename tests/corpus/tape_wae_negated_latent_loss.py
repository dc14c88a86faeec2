# expect: TL003
"""A Wasserstein autoencoder whose discriminator loss is negated inside the gradient call, after the tape closed."""
import tensorflow as tf

class WAE:
    def __init__(self):
        self.encoder = tf.keras.Sequential([tf.keras.Input((20,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(4)])
        self.decoder = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(16, activation="relu"), tf.keras.layers.Dense(20)])
        self.disc = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1, activation="sigmoid")])
        self.ae_opt = tf.keras.optimizers.Adam(1e-3)
        self.disc_opt = tf.keras.optimizers.Adam(1e-3)

    def train(self, x):
        with tf.GradientTape() as ae_tape, tf.GradientTape() as disc_tape:
            z = self.encoder(x)
            recon = self.decoder(z)
            rec_loss = tf.reduce_mean(tf.square(x - recon))
            z_prior = tf.random.normal(tf.shape(z))
            d_real = self.disc(z_prior)
            d_fake = self.disc(z)
            latent_loss = tf.reduce_mean(tf.math.log(d_real + 1e-8) + tf.math.log(1.0 - d_fake + 1e-8))
        ae_vars = self.encoder.trainable_variables + self.decoder.trainable_variables
        ae_grads = ae_tape.gradient(rec_loss, ae_vars)
        self.ae_opt.apply_gradients(zip(ae_grads, ae_vars))
        disc_grads = disc_tape.gradient(-latent_loss, self.disc.trainable_variables)
        self.disc_opt.apply_gradients(zip(disc_grads, self.disc.trainable_variables))

w = WAE()
w.train(tf.random.normal((8, 20)))

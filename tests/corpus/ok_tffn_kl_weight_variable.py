# expect: none
"""The corrected form of tffn_kl_weight_python_float.py: the KL weight is a non-trainable tf.Variable
updated with `assign`, so the traced step reads its current value (the fix given for
https://github.com/tensorflow/tensorflow/issues/31362 and in the tf.function guide).

Observed on TF 2.21 (CPU): the step uses 0.00, 0.25, 0.50, 0.75, 1.00 over the 5 epochs, as set."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(8)
data = rng.normal(size=(256, 12)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices(data).batch(64)


class VAE(tf.keras.Model):
    def __init__(self, latent=2):
        super().__init__()
        self.encoder = tf.keras.layers.Dense(2 * latent)
        self.decoder = tf.keras.layers.Dense(12)
        self.kl_weight = tf.Variable(0.0, trainable=False)
        self.optimizer_ = tf.keras.optimizers.Adam(1e-3)

    def call(self, x):
        mean, log_var = tf.split(self.encoder(x), 2, axis=-1)
        z = mean + tf.exp(0.5 * log_var) * tf.random.normal(tf.shape(mean))
        return self.decoder(z), mean, log_var

    @tf.function
    def train_step_fn(self, x):
        with tf.GradientTape() as tape:
            reconstruction, mean, log_var = self(x, training=True)
            rec_loss = tf.reduce_mean(tf.reduce_sum(tf.square(x - reconstruction), axis=-1))
            kl = -0.5 * tf.reduce_mean(tf.reduce_sum(1 + log_var - tf.square(mean) - tf.exp(log_var), axis=-1))
            loss = rec_loss + self.kl_weight * kl
        grads = tape.gradient(loss, self.trainable_variables)
        self.optimizer_.apply_gradients(zip(grads, self.trainable_variables))
        return loss, self.kl_weight * tf.ones(())


vae = VAE()
for epoch in range(5):
    vae.kl_weight.assign(min(1.0, epoch / 4))
    for x in dataset:
        loss, used = vae.train_step_fn(x)
    print(f"epoch {epoch}: kl_weight set {float(vae.kl_weight):.2f}, used by the step {float(used):.2f}")

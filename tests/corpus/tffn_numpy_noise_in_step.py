# expect: TL401
"""A denoising autoencoder that corrupts its input with `np.random.normal` inside the traced step (the
tf.function docs warn that NumPy randomness is drawn once, at tracing; see
https://github.com/tensorflow/tensorflow/pull/24610).

Observed on TF 2.21 (CPU): the step returns the mean of the noise it added; it is the same number
(0.0432) on all 20 steps, so every batch is corrupted with one fixed noise pattern."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(9)
images = rng.uniform(size=(640, 16)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices(images).batch(32)

autoencoder = tf.keras.Sequential([tf.keras.Input(shape=(16,)), tf.keras.layers.Dense(8, activation="relu"),
                                   tf.keras.layers.Dense(16)])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(clean):
    noise = np.random.normal(0.0, 0.3, size=(32, 16)).astype("float32")
    with tf.GradientTape() as tape:
        denoised = autoencoder(clean + noise, training=True)
        loss = tf.reduce_mean(tf.square(clean - denoised))
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, autoencoder.trainable_variables))
    return loss, tf.reduce_mean(noise)


noise_means = []
for clean in dataset:
    loss, noise_mean = train_step(clean)
    noise_means.append(round(float(noise_mean), 4))
print("loss", float(loss), "distinct noise means", sorted(set(noise_means)))

# expect: none
"""The corrected form of tffn_numpy_noise_in_step.py: the traced step draws its noise with
`tf.random.normal`, which is an op of the graph and runs on every call (the advice of the tf.function
docs; see https://github.com/tensorflow/tensorflow/pull/24610). The eager loop still uses NumPy and a
Python list, which is fine outside the traced function.

Observed on TF 2.21 (CPU): 20 steps, 20 distinct noise means; the loss falls."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(9)
images = rng.uniform(size=(640, 16)).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices(images).batch(32)

autoencoder = tf.keras.Sequential([tf.keras.Input(shape=(16,)), tf.keras.layers.Dense(8, activation="relu"),
                                   tf.keras.layers.Dense(16)])
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(clean, scale):
    noise = tf.random.normal(tf.shape(clean), stddev=0.3) * scale
    with tf.GradientTape() as tape:
        denoised = autoencoder(clean + noise, training=True)
        loss = tf.reduce_mean(tf.square(clean - denoised))
    grads = tape.gradient(loss, autoencoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, autoencoder.trainable_variables))
    return loss, tf.reduce_mean(noise)


noise_means = []
for clean in dataset:
    scale = np.float32(np.random.uniform(0.5, 1.5))
    loss, noise_mean = train_step(clean, tf.constant(scale))
    noise_means.append(round(float(noise_mean), 4))
print("loss", float(loss), "distinct noise means", len(set(noise_means)), "of", len(noise_means))

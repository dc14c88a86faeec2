# expect: none
"""A WGAN-style loop that keeps one `Adam` for both networks on purpose, and builds it for both variable
lists first, as the TF 2.11+ error message advises ("Please call `optimizer.build(variables)` with the full
list of trainable variables before the training loop", quoted in https://github.com/yzhao062/pyod/issues/459).

Observed on TF 2.21 (CPU): Keras 3.15 accepts either subset after `build(all)`; 5 epochs run without error
and `optimizer.iterations` counts both updates (20 after 10 steps)."""
import numpy as np
import tensorflow as tf

NOISE = 4
rng = np.random.default_rng(6)
real_points = rng.normal(loc=-2.0, size=(320, 2)).astype("float32")

generator = tf.keras.Sequential([tf.keras.Input((NOISE,)), tf.keras.layers.Dense(16, activation="relu"),
                                 tf.keras.layers.Dense(2)])
critic = tf.keras.Sequential([tf.keras.Input((2,)), tf.keras.layers.Dense(16, activation="relu"),
                              tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(1e-3, beta_1=0.5)
optimizer.build(generator.trainable_variables + critic.trainable_variables)


def update(tape, loss, model):
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))


step = 0
for epoch in range(5):
    for start in range(0, len(real_points), 160):
        real = real_points[start:start + 160]
        noise = tf.random.normal([len(real), NOISE])
        with tf.GradientTape() as c_tape, tf.GradientTape() as g_tape:
            fake = generator(noise, training=True)
            c_loss = tf.reduce_mean(critic(fake, training=True)) - tf.reduce_mean(critic(real, training=True))
            g_loss = -tf.reduce_mean(critic(fake, training=True))
        update(c_tape, c_loss, critic)
        update(g_tape, g_loss, generator)
        step += 1
    print(epoch, float(c_loss), float(g_loss), "iterations", int(optimizer.iterations), "steps", step)

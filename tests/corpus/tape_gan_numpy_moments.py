# expect: TL004
"""A moment-matching GAN: the generator's samples go through NumPy statistics before the critic, so the generator gets no gradient."""
import numpy as np
import tensorflow as tf

def moments(d):
    mean = np.mean(d)
    diffs = d - mean
    return np.array([mean, np.std(d), np.mean(diffs ** 3), np.mean(diffs ** 4)])

G = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(50, activation="elu"), tf.keras.layers.Dense(100)])
D = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(50, activation="elu"), tf.keras.layers.Dense(1, activation="sigmoid")])
bce = tf.keras.losses.BinaryCrossentropy()
g_opt = tf.keras.optimizers.SGD(1e-3)

for step in range(10):
    z = tf.random.uniform((100, 1))
    with tf.GradientTape() as tape:
        fake = G(z)
        decision = D(moments(fake.numpy().T).reshape((1, 4)))
        g_err = bce(tf.ones((1, 1)), decision)
    grads = tape.gradient(g_err, G.trainable_variables)
    g_opt.apply_gradients(zip(grads, G.trainable_variables))

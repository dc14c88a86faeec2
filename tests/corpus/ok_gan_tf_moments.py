# expect: none
"""The same moment-matching GAN with the statistics in TF ops: the critic passes the gradient on to the generator."""
import tensorflow as tf

def moments(d):
    mean = tf.reduce_mean(d)
    diffs = d - mean
    return tf.stack([mean, tf.math.reduce_std(d), tf.reduce_mean(diffs ** 3), tf.reduce_mean(diffs ** 4)])

G = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(50, activation="elu"), tf.keras.layers.Dense(100)])
D = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(50, activation="elu"), tf.keras.layers.Dense(1, activation="sigmoid")])
bce = tf.keras.losses.BinaryCrossentropy()
g_opt = tf.keras.optimizers.SGD(1e-3)

for step in range(10):
    z = tf.random.uniform((100, 1))
    with tf.GradientTape() as tape:
        fake = G(z)
        decision = D(tf.reshape(moments(tf.transpose(fake)), (1, 4)))
        g_err = bce(tf.ones((1, 1)), decision)
    grads = tape.gradient(g_err, G.trainable_variables)
    g_opt.apply_gradients(zip(grads, G.trainable_variables))

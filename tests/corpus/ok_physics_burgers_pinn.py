# expect: none
"""Physics-informed network for Burgers' equation: input derivatives from watched tapes."""
import numpy as np
import tensorflow as tf

NU = 0.01 / np.pi

net = tf.keras.Sequential([
    tf.keras.layers.Dense(20, activation="tanh", input_shape=(2,)),
    tf.keras.layers.Dense(20, activation="tanh"),
    tf.keras.layers.Dense(1),
])
optimizer = tf.keras.optimizers.Adam(1e-3)


def residual(t, x):
    with tf.GradientTape(persistent=True) as tape:
        tape.watch(t)
        tape.watch(x)
        u = net(tf.stack([t[:, 0], x[:, 0]], axis=1))
        u_x = tape.gradient(u, x)
    u_t = tape.gradient(u, t)
    u_xx = tape.gradient(u_x, x)
    del tape
    return u_t + u * u_x - NU * u_xx


def loss_fn(t_col, x_col, t0, x0, u0):
    r = residual(t_col, x_col)
    u_pred = net(tf.concat([t0, x0], axis=1))
    return tf.reduce_mean(tf.square(r)) + tf.reduce_mean(tf.square(u0 - u_pred))


@tf.function
def train_step(t_col, x_col, t0, x0, u0):
    with tf.GradientTape() as tape:
        loss = loss_fn(t_col, x_col, t0, x0, u0)
    grads = tape.gradient(loss, net.trainable_variables)
    optimizer.apply_gradients(zip(grads, net.trainable_variables))
    return loss


t_col = tf.constant(np.random.rand(1000, 1), dtype=tf.float32)
x_col = tf.constant(np.random.uniform(-1, 1, (1000, 1)), dtype=tf.float32)
x0 = tf.constant(np.linspace(-1, 1, 100)[:, None], dtype=tf.float32)
t0 = tf.zeros_like(x0)
u0 = -tf.sin(np.pi * x0)
for it in range(100):
    loss = train_step(t_col, x_col, t0, x0, u0)

# expect: TL012
"""A TD(0) critic for a random walk whose TD error `r + gamma * V(s') - V(s)` is squared with the
gradient flowing through `V(s')` too (the "set detach() on the TD target" fix of
datawhalechina/easy-rl#117; stable-baselines explains its `tf.stop_gradient` on the backups in
hill-a/stable-baselines#564).

Observed on TF 2.21 (CPU): the values are biased towards their neighbours: after 1500 updates
V = 0.27, 0.38, 0.52, 0.65, 0.76 against the true 0.10, 0.21, 0.35, 0.52, 0.75; with the next-state
value stopped (ok_target_td0_critic_stopped.py) V = 0.08, 0.17, 0.33, 0.50, 0.72."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(4)
rng = np.random.default_rng(4)
n_states, gamma = 7, 0.95  # a random walk: left or right with equal chance, the right end pays 1
eye = np.eye(n_states, dtype="float32")
true_v = np.zeros(n_states)
for _ in range(2000):
    new = np.zeros(n_states)
    for s in range(1, n_states - 1):
        new[s] = 0.5 * gamma * true_v[s - 1] * (s - 1 > 0) + 0.5 * (float(s + 1 == n_states - 1) + gamma * true_v[s + 1] * (s + 1 < n_states - 1))
    true_v = new

critic = tf.keras.Sequential([tf.keras.Input((n_states,)), tf.keras.layers.Dense(32, activation="tanh"),
                              tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(3e-3)


def update(states, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        td_error = rewards + gamma * critic(next_states)[:, 0] * (1.0 - dones) - critic(states)[:, 0]
        loss = tf.reduce_mean(tf.square(td_error))
    grads = tape.gradient(loss, critic.trainable_variables)
    optimizer.apply_gradients(zip(grads, critic.trainable_variables))
    return loss


for step in range(1, 1501):
    s = rng.integers(1, n_states - 1, 64)
    s2 = s + rng.choice([-1, 1], 64)
    r = (s2 == n_states - 1).astype("float32")
    d = ((s2 == 0) | (s2 == n_states - 1)).astype("float32")
    loss = update(eye[s], r, eye[s2], d)
    if step % 500 == 0:
        v = critic(eye[1:-1]).numpy()[:, 0]
        print(step, "td loss", round(float(loss), 4), "V", np.round(v, 2), "true", np.round(true_v[1:-1], 2))

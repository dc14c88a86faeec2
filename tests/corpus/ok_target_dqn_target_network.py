# expect: none
"""A DQN update on a small slippery chain with a separate target network, copied from the online
network every 50 steps: the target carries no gradient for the weights being trained (the design
discussed in fg91/Deep-Q-Learning#5 and openai/baselines#105).

Observed on TF 2.21 (CPU): it learns the true values: Q(0, right) is 0.37, 0.39, 0.41 after 600, 1200,
1800 updates against the true 0.414, with a largest error of 0.03-0.05."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
n_states, gamma, slip = 6, 0.9, 0.3  # action 1 moves right, 0 left; 30% of moves slip the other way


def env_step(s, a):
    move = 1 if a == 1 else -1
    if rng.random() < slip:
        move = -move
    s2 = min(max(s + move, 0), n_states - 1)
    end = float(s2 == n_states - 1)  # reaching the right end pays 1 and ends the episode
    return s2, end, end


replay = []
for _ in range(4000):
    s, a = int(rng.integers(0, n_states - 1)), int(rng.integers(0, 2))
    replay.append((s, a, *env_step(s, a)))
s_all, a_all, s2_all, r_all, d_all = (np.array(column) for column in zip(*replay))
eye = np.eye(n_states, dtype="float32")

true_q = np.zeros((n_states, 2))  # value iteration on the known dynamics
for _ in range(500):
    v = true_q.max(axis=1)
    v[-1] = 0.0
    for s in range(n_states - 1):
        for a in (0, 1):
            true_q[s, a] = 0.0
            for move, p in ((1 if a == 1 else -1, 1 - slip), (-1 if a == 1 else 1, slip)):
                s2 = min(max(s + move, 0), n_states - 1)
                true_q[s, a] += p * (float(s2 == n_states - 1) + gamma * v[s2])

q_net = tf.keras.Sequential([tf.keras.Input((n_states,)), tf.keras.layers.Dense(32, activation="relu"),
                             tf.keras.layers.Dense(2)])
target_net = tf.keras.models.clone_model(q_net)
target_net.set_weights(q_net.get_weights())
optimizer = tf.keras.optimizers.Adam(3e-3)
loss_fn = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(states, actions, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        next_q = target_net(next_states)
        targets = rewards + gamma * tf.reduce_max(next_q, axis=1) * (1.0 - dones)
        q_taken = tf.reduce_sum(q_net(states) * tf.one_hot(actions, 2), axis=1)
        loss = loss_fn(targets, q_taken)
    grads = tape.gradient(loss, q_net.trainable_variables)
    optimizer.apply_gradients(zip(grads, q_net.trainable_variables))
    return loss


for step in range(1, 1801):
    idx = rng.integers(0, len(replay), 64)
    loss = train_step(eye[s_all[idx]], a_all[idx].astype("int32"), r_all[idx].astype("float32"),
                      eye[s2_all[idx]], d_all[idx].astype("float32"))
    if step % 50 == 0:
        target_net.set_weights(q_net.get_weights())
    if step % 600 == 0:
        q = q_net(eye[:-1]).numpy()
        print(step, "td loss", round(float(loss), 4), "max |Q - Q*|", round(float(np.abs(q - true_q[:-1]).max()), 3),
              "Q(0, right)", round(float(q[0, 1]), 3), "true", round(float(true_q[0, 1]), 3))

# expect: TL012
"""A DQN update on a small slippery chain whose bootstrapped target `r + gamma * max_a' Q(s', a')` is
computed by the Q-network being trained, inside the tape, without `tf.stop_gradient` (the question
of openai/baselines#105 and fg91/Deep-Q-Learning#5: without it the gradient flows into the target).

Observed on TF 2.21 (CPU): the Q-values converge to wrong values: Q(0, right) is 0.83, 0.85, 0.83 after
600, 1200, 1800 updates against the true 0.414 (largest error 0.55), while the TD loss (0.0024-0.0047)
looks better than with `tf.stop_gradient` (ok_target_dqn_stop_gradient.py: Q(0, right) 0.40-0.44,
largest error 0.04-0.06)."""
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
optimizer = tf.keras.optimizers.Adam(3e-3)
loss_fn = tf.keras.losses.MeanSquaredError()


@tf.function
def train_step(states, actions, rewards, next_states, dones):
    with tf.GradientTape() as tape:
        next_q = q_net(next_states)
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
    if step % 600 == 0:
        q = q_net(eye[:-1]).numpy()
        print(step, "td loss", round(float(loss), 4), "max |Q - Q*|", round(float(np.abs(q - true_q[:-1]).max()), 3),
              "Q(0, right)", round(float(q[0, 1]), 3), "true", round(float(true_q[0, 1]), 3))

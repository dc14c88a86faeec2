# expect: none
"""An agent class whose SARSA target `r + gamma * Q(s', a')` is wrapped in `tf.stop_gradient` before
it is regressed onto (the fix asked for in philtabor/Deep-Q-Learning-Paper-To-Code#16; the near miss
of target_sarsa_agent_gather.py).

Observed on TF 2.21 (CPU): it learns the values: Q(1, left), whose true value is 0, is -0.004, 0.005,
0.013 after 500, 1000, 1500 updates, with a largest error of 0.06-0.11."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(5)
rng = np.random.default_rng(5)
n_states, gamma = 7, 0.95  # a random walk evaluated under the uniform policy; the right end pays 1
eye = np.eye(n_states, dtype="float32")
true_v = np.zeros(n_states)
for _ in range(2000):
    new = np.zeros(n_states)
    for s in range(1, n_states - 1):
        for s2 in (s - 1, s + 1):
            new[s] += 0.5 * (float(s2 == n_states - 1) + gamma * true_v[s2] * (0 < s2 < n_states - 1))
    true_v = new
true_q = np.array([[float(s2 == n_states - 1) + gamma * true_v[s2] * (0 < s2 < n_states - 1)
                    for s2 in (s - 1, s + 1)] for s in range(1, n_states - 1)])


class SarsaAgent:
    def __init__(self):
        self.q = tf.keras.Sequential([tf.keras.Input((n_states,)), tf.keras.layers.Dense(32, activation="tanh"),
                                      tf.keras.layers.Dense(2)])
        self.optimizer = tf.keras.optimizers.Adam(3e-3)

    @tf.function
    def learn(self, s, a, r, s2, a2, done):
        with tf.GradientTape() as tape:
            target = tf.stop_gradient(r + gamma * tf.gather(self.q(s2), a2, batch_dims=1) * (1.0 - done))
            q_sa = tf.gather(self.q(s), a, batch_dims=1)
            loss = tf.reduce_mean((target - q_sa) ** 2)
        grads = tape.gradient(loss, self.q.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.q.trainable_variables))
        return loss


agent = SarsaAgent()
for step in range(1, 1501):
    s = rng.integers(1, n_states - 1, 64)
    a = rng.integers(0, 2, 64)
    s2 = s + 2 * a - 1
    r = (s2 == n_states - 1).astype("float32")
    done = ((s2 == 0) | (s2 == n_states - 1)).astype("float32")
    a2 = rng.integers(0, 2, 64)
    loss = agent.learn(eye[s], a.astype("int32"), r, eye[s2], a2.astype("int32"), done)
    if step % 500 == 0:
        q = agent.q(eye[1:-1]).numpy()
        print(step, "loss", round(float(loss), 4), "max |Q - Q_pi|", round(float(np.abs(q - true_q).max()), 3),
              "Q(1, left)", round(float(q[0, 0]), 3), "true", round(float(true_q[0, 0]), 3))

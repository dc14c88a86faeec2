# expect: none
"""A DQN agent that keeps a second optimizer from an earlier experiment: the Q-network trains with Adam,
the RMSprop attribute is never read. Dead code, but harmless: the one network has its own optimizer, so
TL002 stays silent (on real code such leftovers were judged false alarms: PPO agents whose actor and critic
each apply their own optimizer, while the agent keeps two unused ones)."""
import numpy as np
import tensorflow as tf


class DQNAgent:
    def __init__(self, n_actions=2, gamma=0.99):
        self.n_actions = n_actions
        self.gamma = gamma
        self.q = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"),
                                      tf.keras.layers.Dense(n_actions)])
        self.target = tf.keras.Sequential([tf.keras.layers.Dense(32, activation="relu"),
                                           tf.keras.layers.Dense(n_actions)])
        self.optimizer = tf.keras.optimizers.Adam(1e-3)
        self.rms = tf.keras.optimizers.RMSprop(2.5e-4)

    def train(self, states, actions, rewards, next_states, dones):
        next_q = tf.reduce_max(self.target(next_states), axis=1)
        targets = rewards + self.gamma * (1.0 - dones) * next_q
        with tf.GradientTape() as tape:
            q = tf.reduce_sum(self.q(states) * tf.one_hot(actions, self.n_actions), axis=1)
            loss = tf.reduce_mean(tf.square(tf.stop_gradient(targets) - q))
        grads = tape.gradient(loss, self.q.trainable_variables)
        self.optimizer.apply_gradients(zip(grads, self.q.trainable_variables))
        return loss


agent = DQNAgent()
rng = np.random.default_rng(0)
for step in range(3):
    s = rng.normal(size=(8, 4)).astype("float32")
    agent.train(s, rng.integers(0, 2, 8), np.ones(8, "float32"), s, np.zeros(8, "float32"))

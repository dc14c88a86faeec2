# expect: TL306
"""A DQN-style agent that keeps its network's parameter list from `__init__`, before the subclassed model
has ever been called (empty `trainable_variables` before the layers are built:
https://github.com/tensorflow/tensorflow/issues/26948; a list taken at setup time stays empty, as in
https://github.com/LaurentMazare/tch-rs/issues/106).

Observed on TF 2.21 (CPU): `agent.params` is [] while the network has 4 variables after the first
forward pass; `learn` raises `ValueError: not enough values to unpack (expected 2, got 0)` in
`apply_gradients` (inside tf.function)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)

rng = np.random.default_rng(1)
states = rng.normal(size=(256, 4)).astype("float32")
targets = (states @ rng.normal(size=(4, 2))).astype("float32")


class QNetwork(tf.keras.Model):
    def __init__(self, n_actions):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(32, activation="relu")
        self.q = tf.keras.layers.Dense(n_actions)

    def call(self, x):
        return self.q(self.hidden(x))


class Agent:
    def __init__(self, n_actions):
        self.net = QNetwork(n_actions)
        self.params = self.net.trainable_variables
        self.optimizer = tf.keras.optimizers.Adam(1e-3)

    @tf.function
    def learn(self, s, q_target):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(q_target - self.net(s)))
        grads = tape.gradient(loss, self.params)
        self.optimizer.apply_gradients(zip(grads, self.params))
        return loss


agent = Agent(2)
print("params kept:", len(agent.params))
for step in range(0, 256, 32):
    loss = agent.learn(states[step:step + 32], targets[step:step + 32])
    print(step, float(loss))

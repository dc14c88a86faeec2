# expect: TL306
"""The agent of prebuild_agent_params_in_init.py "fixed" with `self.net.build((None, 4))` before the
parameter list is kept (the `build()` advice of https://github.com/tensorflow/tensorflow/issues/26948,
which holds for Sequential models). The subclassed QNetwork defines no `build`, and on Keras 3.15
`Model.build(shape)` then sets `built = True` without creating any variable.

Observed on TF 2.21 (CPU): `agent.params` is [] after `build`; `learn` raises `ValueError: not enough
values to unpack (expected 2, got 0)` in `apply_gradients`."""
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
        self.net.build((None, 4))
        self.params = self.net.trainable_variables
        self.optimizer = tf.keras.optimizers.Adam(1e-2)

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

# expect: none
"""The agent of prebuild_agent_params_in_init.py, with the network called once on a dummy batch before its
parameter list is kept ("call the model with data and they will build automatically",
https://github.com/tensorflow/tensorflow/issues/26948). (`self.net.build((None, 4))` is not enough for this
subclassed model on Keras 3.15: the kept list is still empty.)

Observed on TF 2.21 (CPU): the kept list has 4 variables; every step updates them (batch losses 2.19, 1.37, ...,
1.02 over 8 steps, no error)."""
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
        self.net(tf.zeros((1, 4)))  # one call creates the weights
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

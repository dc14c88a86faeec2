# expect: TL305  # Keras 3 (TF 2.21) does not track the tf.Variable attributes of NoisyDense, so they never train
"""The same noisy-network Q learner with the noisy kernel combined in call, under the tape."""
import numpy as np
import tensorflow as tf

class NoisyDense(tf.keras.layers.Layer):
    def __init__(self, units, std_init=0.5):
        super().__init__()
        self.units = units
        self.std_init = std_init

    def build(self, input_shape):
        fan_in = int(input_shape[-1])
        bound = 1 / np.sqrt(fan_in)
        self.w_mu = tf.Variable(tf.random.uniform((fan_in, self.units), -bound, bound))
        self.w_sigma = tf.Variable(tf.fill((fan_in, self.units), self.std_init / np.sqrt(self.units)))
        self.b_mu = tf.Variable(tf.random.uniform((self.units,), -bound, bound))
        self.b_sigma = tf.Variable(tf.fill((self.units,), self.std_init / np.sqrt(self.units)))
        self.w_eps = tf.random.normal((fan_in, self.units))
        self.b_eps = tf.random.normal((self.units,))

    def call(self, x):
        kernel = self.w_mu + self.w_sigma * self.w_eps
        bias = self.b_mu + self.b_sigma * self.b_eps
        return tf.matmul(x, kernel) + bias

class QNet(tf.keras.Model):
    def __init__(self, n_actions):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.q = NoisyDense(n_actions)

    def call(self, s):
        return self.q(self.hidden(s))

net = QNet(3)
opt = tf.keras.optimizers.Adam(1e-3)
states, targets = tf.random.normal((32, 4)), tf.random.normal((32, 3))
for _ in range(3):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(targets - net(states)))
    grads = tape.gradient(loss, net.trainable_variables)
    opt.apply_gradients(zip(grads, net.trainable_variables))

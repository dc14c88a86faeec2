# expect: none
"""The same noisy-network Q learner with the noisy kernel combined in call, under the tape. Its weights
come from `add_weight`, which Keras 3 tracks (raw `tf.Variable` attributes would not train: TL305).

Observed on TF 2.21 (CPU): runs; `net.trainable_variables` holds all 6 weights (the Dense's 2 and the
4 NoisyDense ones), so every one of them is updated."""
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
        uniform = tf.keras.initializers.RandomUniform(-bound, bound)
        sigma = tf.keras.initializers.Constant(float(self.std_init / np.sqrt(self.units)))
        self.w_mu = self.add_weight(shape=(fan_in, self.units), initializer=uniform, name="w_mu")
        self.w_sigma = self.add_weight(shape=(fan_in, self.units), initializer=sigma, name="w_sigma")
        self.b_mu = self.add_weight(shape=(self.units,), initializer=uniform, name="b_mu")
        self.b_sigma = self.add_weight(shape=(self.units,), initializer=sigma, name="b_sigma")

    def call(self, x):
        # Fresh noise on every call (a tensor made in build would belong to Keras' build graph).
        kernel = self.w_mu + self.w_sigma * tf.random.normal(tf.shape(self.w_mu))
        bias = self.b_mu + self.b_sigma * tf.random.normal(tf.shape(self.b_mu))
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
    print(len(net.trainable_variables), "variables, loss", float(loss))

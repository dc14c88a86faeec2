# expect: none
"""The hand-written momentum optimizer of k3api_keras2_optimizer_subclass.py rewritten for Keras 3: `build()`
creates the velocity slots with `add_variable_from_reference` and `update_step()` applies them (the
optimizer API of Keras 3; see keras-team/keras#18467).

Observed on TF 2.21 / Keras 3.15 (CPU): it trains; the loss falls from 4.7 to 0.22 in 10 steps."""
import numpy as np
import tensorflow as tf


class MomentumSGD(tf.keras.optimizers.Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.9, name="MomentumSGD", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self.momentum = momentum

    def build(self, var_list):
        if self.built:
            return
        super().build(var_list)
        self.velocities = [self.add_variable_from_reference(v, "velocity") for v in var_list]

    def update_step(self, gradient, variable, learning_rate):
        velocity = self.velocities[self._get_variable_index(variable)]
        velocity.assign(self.momentum * velocity - learning_rate * gradient)
        variable.assign_add(velocity)


rng = np.random.default_rng(2)
x = rng.normal(size=(64, 4)).astype("float32")
y = (x.sum(axis=1, keepdims=True)).astype("float32")
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
optimizer = MomentumSGD(0.05, momentum=0.5)
for step in range(10):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    print(step, float(loss))

# expect: TL502
"""A hand-written SGD-with-momentum optimizer in the Keras 2 style (`_create_slots`, `_resource_apply_dense`,
`_set_hyper`), used in a GradientTape loop. Keras 3 optimizers have `build()` and `update_step()` instead
(the optimizer rewrite listed in keras-team/keras#18467).

Observed on TF 2.21 / Keras 3.15 (CPU): constructing it raises AttributeError: 'MomentumSGD' object has no
attribute '_set_hyper'; without that line, the first `apply_gradients` raises NotImplementedError (the base
`update_step`)."""
import numpy as np
import tensorflow as tf


class MomentumSGD(tf.keras.optimizers.Optimizer):
    def __init__(self, learning_rate=0.01, momentum=0.9, name="MomentumSGD", **kwargs):
        super().__init__(learning_rate=learning_rate, name=name, **kwargs)
        self._set_hyper("momentum", momentum)

    def _create_slots(self, var_list):
        for var in var_list:
            self.add_slot(var, "velocity")

    def _resource_apply_dense(self, grad, var, apply_state=None):
        velocity = self.get_slot(var, "velocity")
        velocity.assign(self._get_hyper("momentum") * velocity - self.learning_rate * grad)
        return var.assign_add(velocity)


rng = np.random.default_rng(2)
x = rng.normal(size=(64, 4)).astype("float32")
y = (x.sum(axis=1, keepdims=True)).astype("float32")
model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(1)])
optimizer = MomentumSGD(0.05)
for step in range(10):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
print("final loss", float(loss))

# expect: none
"""The same regression as a `tf.Module` holding raw `tf.Variable`s: `tf.Module` does track them (unlike a
Keras 3 layer, https://github.com/tensorflow/tensorflow/issues/38211), so a loop over
`module.trainable_variables` trains them.

Observed on TF 2.21 (CPU): 2 trainable variables; the loss falls from 34.8 to 1e-12 in 100 steps."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x_train = rng.normal(size=(256, 3)).astype("float32")
y_train = (x_train @ np.array([[2.0], [-3.0], [1.0]], "float32") + 5.0).astype("float32")


class Linear(tf.Module):
    def __init__(self, units, input_dim):
        super().__init__()
        self.w = tf.Variable(tf.random.normal((input_dim, units), stddev=0.05))
        self.b = tf.Variable(tf.zeros((units,)))

    def __call__(self, x):
        return tf.matmul(x, self.w) + self.b


model = Linear(1, 3)
optimizer = tf.keras.optimizers.SGD(0.1)
print("trainable variables:", len(model.trainable_variables))
for step in range(100):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x_train) - y_train))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    if step % 25 == 0 or step == 99:
        print(step, float(loss))

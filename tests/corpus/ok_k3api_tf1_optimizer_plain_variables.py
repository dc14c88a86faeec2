# expect: none
"""A TF 1 optimizer where Keras 3 still lets it work (the near miss of k3api_tf1_optimizer_keras_model.py):
`tf.compat.v1.train.AdamOptimizer().minimize(loss_fn, var_list=[w, b])` on plain `tf.Variable`s, the
eager form of the TF 1 linear-regression tutorials (TF's migration guide maps it to
`tf.keras.optimizers.Adam`, tensorflow/models#8293), and TF 1's slotless `GradientDescentOptimizer`
stepping a Keras model's variables through `apply_gradients`.

Observed on TF 2.21 / Keras 3.15 (CPU): both run; the linear fit's loss falls from 4.01 to 3e-9 in 200
steps (w 2.000, b 0.500 for a true 2.0, 0.5), and the Keras model's loss falls from 4.60 to 0.058 in 50 SGD
steps (seeded)."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
x = rng.normal(size=(128, 1)).astype("float32")
y = 2.0 * x + 0.5

w = tf.Variable(0.0)
b = tf.Variable(0.0)
adam = tf.compat.v1.train.AdamOptimizer(0.05)


def linear_loss():
    return tf.reduce_mean(tf.square(w * x + b - y))


print("linear", float(linear_loss()))
for step in range(200):
    adam.minimize(linear_loss, var_list=[w, b])
print("linear", float(linear_loss()), float(w), float(b))

model = tf.keras.Sequential([tf.keras.Input((1,)), tf.keras.layers.Dense(8, activation="tanh"),
                             tf.keras.layers.Dense(1)])
sgd = tf.compat.v1.train.GradientDescentOptimizer(0.05)
for step in range(50):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    sgd.apply_gradients(zip(grads, model.trainable_variables))
    if step in (0, 49):
        print("model", step, float(loss))

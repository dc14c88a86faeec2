# expect: TL010
"""A two-layer network written with raw variables that keeps its hidden activations in a `tf.Variable`
buffer (to inspect them later), assigned inside the tape and read back by the output layer (the memory
layer of keras-team/keras#16128: "It seems that assign op would break gradient").

Observed on TF 2.21 (CPU): Keras warns `Gradients do not exist for variables ['Variable:0', 'Variable:0']
when minimizing the loss`; the loss only falls from 4.71 to 1.46 in 100 steps (the output layer alone
learns), and the first layer's kernel is unchanged: max |w1 - w1_start| = 0.0."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(0)
x = rng.normal(size=(128, 6)).astype("float32")
y = np.sin(x[:, :1] * 2.0) + x[:, 1:2] ** 2

w1 = tf.Variable(rng.normal(scale=0.5, size=(6, 16)).astype("float32"))
b1 = tf.Variable(tf.zeros((16,)))
w2 = tf.Variable(rng.normal(scale=0.5, size=(16, 1)).astype("float32"))
b2 = tf.Variable(tf.zeros((1,)))
hidden = tf.Variable(tf.zeros((128, 16)), trainable=False)
params = [w1, b1, w2, b2]
optimizer = tf.keras.optimizers.Adam(1e-2)
w1_start = w1.numpy()

for step in range(100):
    with tf.GradientTape() as tape:
        hidden.assign(tf.nn.relu(tf.matmul(x, w1) + b1))
        pred = tf.matmul(hidden, w2) + b2
        loss = tf.reduce_mean(tf.square(pred - y))
    grads = tape.gradient(loss, params)
    optimizer.apply_gradients(zip(grads, params))
    if step % 25 == 0 or step == 99:
        print(step, float(loss))
print("max |w1 - w1_start| =", float(np.abs(w1.numpy() - w1_start).max()))

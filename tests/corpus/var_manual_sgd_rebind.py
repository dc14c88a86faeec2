# expect: TL303
"""Linear regression from scratch that replaces its variables with tensors on every update."""
import numpy as np
import tensorflow as tf

true_w, true_b = 3.0, 2.0
x = np.random.randn(1000).astype("float32")
y = true_w * x + true_b + np.random.randn(1000).astype("float32") * 0.1

W = tf.Variable(5.0)
b = tf.Variable(0.0)
learning_rate = 0.1


def predict(inputs):
    return W * inputs + b


for epoch in range(20):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - predict(x)))
    dW, db = tape.gradient(loss, [W, b])
    W = W - learning_rate * dW
    b.assign_sub(learning_rate * db)
    print(f"epoch {epoch}: W={float(W):.3f} b={float(b):.3f} loss={float(loss):.4f}")

# expect: none
"""Softmax regression from scratch with variables updated in place."""
import numpy as np
import tensorflow as tf

(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, 784).astype("float32") / 255.0
y_train = y_train.astype("int64")

W = tf.Variable(tf.random.normal((784, 10), stddev=0.01))
b = tf.Variable(tf.zeros((10,)))
params = [W, b]
lr = 0.5


def logits_of(x):
    return tf.matmul(x, W) + b


for epoch in range(3):
    for i in range(0, 60000, 256):
        x, y = x_train[i:i + 256], y_train[i:i + 256]
        with tf.GradientTape() as tape:
            logits = logits_of(x)
            loss = tf.reduce_mean(tf.nn.sparse_softmax_cross_entropy_with_logits(labels=y, logits=logits))
        grads = tape.gradient(loss, params)
        for param, grad in zip(params, grads):
            param.assign_sub(lr * grad)
    accuracy = np.mean(np.argmax(logits_of(x_train[:1000]).numpy(), axis=1) == y_train[:1000])
    print(f"epoch {epoch}: loss {loss.numpy():.3f} acc {accuracy:.3f}")

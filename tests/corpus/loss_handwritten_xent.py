# expect: TL108
"""Softmax regression from scratch with a hand-written cross-entropy (tensorflow/tensorflow#52175 shape)."""
import numpy as np
import tensorflow as tf

NUM_FEATURES = 784
NUM_CLASSES = 10

(x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
x_train = x_train.reshape(-1, NUM_FEATURES).astype("float32") / 255.0
y_train = tf.one_hot(y_train, NUM_CLASSES)

W = tf.Variable(tf.random.normal([NUM_FEATURES, NUM_CLASSES], stddev=0.01), name="weights")
b = tf.Variable(tf.zeros([NUM_CLASSES]), name="bias")
optimizer = tf.keras.optimizers.SGD(learning_rate=0.1)


def model(x):
    return tf.nn.softmax(tf.matmul(x, W) + b)


def cross_entropy(y_true, y_pred):
    return tf.reduce_mean(-tf.reduce_sum(y_true * tf.math.log(y_pred + 1e-10), axis=1))


dataset = tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(60000).batch(128)
for epoch in range(5):
    for step, (batch_x, batch_y) in enumerate(dataset):
        with tf.GradientTape() as tape:
            loss = cross_entropy(batch_y, model(batch_x))
        grads = tape.gradient(loss, [W, b])
        optimizer.apply_gradients(zip(grads, [W, b]))
    print("epoch", epoch, "loss", loss.numpy(), "mean |W|", np.abs(W.numpy()).mean())

# expect: TL010
"""An encoder whose outputs are accumulated into a memory variable with `assign_add` inside the tape, the
loss then read from the memory (the pattern alextp explains in tensorflow/tensorflow#30234: "TF doesn't
track assignments to tf.Variables to their source operations"; also tensorflow/tensorflow#54568).

Observed on TF 2.21 (CPU): every gradient of the encoder is None and the first `apply_gradients` raises
`ValueError: No gradients provided for any variable.`"""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(4)
sequence = rng.normal(size=(5, 32, 8)).astype("float32")  # 5 time steps, batch of 32
target = sequence.sum(axis=0)[:, :4] * 0.5

encoder = tf.keras.Sequential([tf.keras.Input(shape=(8,)), tf.keras.layers.Dense(4)])
memory = tf.Variable(tf.zeros((32, 4)), trainable=False)
optimizer = tf.keras.optimizers.Adam(1e-2)


def train_step(steps, y):
    memory.assign(tf.zeros((32, 4)))
    with tf.GradientTape() as tape:
        for t in range(steps.shape[0]):
            memory.assign_add(encoder(steps[t], training=True))
        loss = tf.reduce_mean(tf.square(memory - y))
    grads = tape.gradient(loss, encoder.trainable_variables)
    optimizer.apply_gradients(zip(grads, encoder.trainable_variables))
    return loss


for epoch in range(20):
    print(epoch, float(train_step(sequence, target)))

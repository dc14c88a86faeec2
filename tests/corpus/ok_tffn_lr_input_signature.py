# expect: none
"""The corrected form of tffn_lr_float_per_epoch.py: the decayed learning rate is still a Python float
computed every epoch, but the step has an `input_signature`, so TF converts it to a float32 tensor and
traces once (the fix discussed in https://github.com/yerkojahve/Meta-Pseudo-label/issues/1).

Observed on TF 2.21 (CPU): 8 epochs, 1 trace (`experimental_get_tracing_count()`); the loss falls to
0.0000 as with the retracing version."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
features = rng.normal(size=(512, 10)).astype("float32")
targets = (features @ rng.normal(size=(10, 1)) + 0.1).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(64)

weights = tf.Variable(tf.zeros((10, 1)))
bias = tf.Variable(0.0)


@tf.function(input_signature=[tf.TensorSpec([None, 10], tf.float32), tf.TensorSpec([None, 1], tf.float32),
                              tf.TensorSpec([], tf.float32)])
def sgd_step(x, y, learning_rate):
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(y - (x @ weights + bias)))
    grad_w, grad_b = tape.gradient(loss, [weights, bias])
    weights.assign_sub(learning_rate * grad_w)
    bias.assign_sub(learning_rate * grad_b)
    return loss


initial_lr = 0.1
for epoch in range(8):
    lr = initial_lr * 0.8 ** epoch
    for x, y in dataset:
        loss = sgd_step(x, y, lr)
    print(f"epoch {epoch}: lr {lr:.4f} loss {float(loss):.4f}")
print("traces", sgd_step.experimental_get_tracing_count())

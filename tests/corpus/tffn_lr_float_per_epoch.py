# expect: TL402
"""A hand-written SGD step whose decayed learning rate is recomputed as a Python float every epoch and
passed to a `tf.function(reduce_retracing=True)` (the situation of
https://github.com/yerkojahve/Meta-Pseudo-label/issues/1: a Python learning rate passed to a traced
`train_step` in a loop).

Observed on TF 2.21 (CPU): 8 epochs give 8 traces (`experimental_get_tracing_count()`);
`reduce_retracing=True` does not generalise Python floats, only tensor shapes."""
import numpy as np
import tensorflow as tf

rng = np.random.default_rng(5)
features = rng.normal(size=(512, 10)).astype("float32")
targets = (features @ rng.normal(size=(10, 1)) + 0.1).astype("float32")
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).batch(64)

weights = tf.Variable(tf.zeros((10, 1)))
bias = tf.Variable(0.0)


@tf.function(reduce_retracing=True)
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

# expect: TL113
"""Regressor with a `tanh` output unit trained with `Huber()` in a custom `tf.GradientTape` loop over a
`tf.data` pipeline, on unscaled `make_regression` targets (hundreds, of both signs). It follows
http://ansaurus.com/question/3644795-neural-network-python ("at the output you use a sigmoid
(math.tanh(..)) whose values are always between -1 and 1 ... you always get a large error when trying
to fit output values outside that range"). The data are synthetic.

Observed on TF 2.21 (CPU): mean Huber loss 69.56 after the first epoch, 69.16 after the fifth, 69.15
after the tenth: the predictions are pinned to -1.000 and 1.000 while the targets run from -294.4 to
274.5. With a linear output the same loop goes 68.71, 9.42, 5.31 and predicts -244 to 217.
"""
import numpy as np
import tensorflow as tf
from sklearn.datasets import make_regression

tf.keras.utils.set_random_seed(14)
features, targets = make_regression(n_samples=1024, n_features=4, noise=1.0, random_state=14)
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(1024).batch(32)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(4,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(1, activation="tanh"),
])
loss_fn = tf.keras.losses.Huber()
optimizer = tf.keras.optimizers.Adam(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(10):
    losses = [float(train_step(x, y)) for x, y in dataset]
    if epoch in (0, 4, 9):
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.2f}")

pred = model.predict(features, verbose=0)
print(f"predictions: min {pred.min():.3f}, max {pred.max():.3f}; targets: min {targets.min():.1f}, max {targets.max():.1f}")

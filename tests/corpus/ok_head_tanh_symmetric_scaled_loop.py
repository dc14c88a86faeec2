# expect: none
"""A `tanh` output unit whose targets are first scaled into [-1, 1] with
`MinMaxScaler(feature_range=(-1, 1))`, trained with MSE in a custom `tf.GradientTape` loop, the setup of
https://wiki.hoelee.com/content/stats.stackexchange.com_en_all_2022-05/questions/545792/neural-network-prediction-gets-worse-when-ground-truth-is-close-to-the-edges-o
("My network has only 1 output with Tanh activation, so output will be bound in [-1, 1]. I use MSE").
The data are synthetic (`make_regression`). The near miss of TL113: the targets are scaled into the
activation's range.

Observed on TF 2.21 (CPU): mean loss 0.0097, 0.0006, 0.0005 at epochs 1, 5, 10; predictions span
-0.84 to 0.83 against targets -1.00 to 1.00.
"""
import numpy as np
import tensorflow as tf
from sklearn.datasets import make_regression
from sklearn.preprocessing import MinMaxScaler

tf.keras.utils.set_random_seed(17)
features, targets = make_regression(n_samples=1024, n_features=4, noise=1.0, random_state=17)
targets = MinMaxScaler(feature_range=(-1, 1)).fit_transform(targets.reshape(-1, 1))
dataset = tf.data.Dataset.from_tensor_slices((features, targets)).shuffle(1024).batch(32)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(4,)),
    tf.keras.layers.Dense(32, activation="relu"),
    tf.keras.layers.Dense(1, activation="tanh"),
])
mse = tf.keras.losses.MeanSquaredError()
optimizer = tf.keras.optimizers.Adam(0.01)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = mse(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss


for epoch in range(10):
    losses = [float(train_step(x, y)) for x, y in dataset]
    if epoch in (0, 4, 9):
        print(f"epoch {epoch + 1}: loss {np.mean(losses):.4f}")

pred = model.predict(features, verbose=0)
print(f"predictions: min {pred.min():.2f}, max {pred.max():.2f}; targets: min {targets.min():.2f}, max {targets.max():.2f}")

# expect: none
"""The near miss of a linear stack that is meant to be linear: a linear autoencoder (PCA) whose code layer,
`Dense(2)`, is narrower than its output, `Dense(20)`. The bottleneck constrains the map to rank 2, which is
the point (contrast https://github.com/keras-team/keras/issues/9286, where the hidden layers were as wide
as the output and added nothing).

Observed on TF 2.21 (CPU), on 20-dimensional data lying near a plane (variance 2.656): the reconstruction
MSE goes 2.37 -> 0.0029 in 30 epochs, close to the 0.0023 of PCA with two components."""
import numpy as np
import tensorflow as tf
from tensorflow import keras

keras.utils.set_random_seed(0)
rng = np.random.default_rng(0)
codes = rng.normal(size=(2000, 2))
data = (codes @ rng.normal(size=(2, 20)) + 0.05 * rng.normal(size=(2000, 20))).astype("float32")

autoencoder = keras.Sequential([
    keras.Input((20,)),
    keras.layers.Dense(2),
    keras.layers.Dense(20),
])
autoencoder.compile(optimizer=keras.optimizers.Adam(1e-2), loss="mse")
history = autoencoder.fit(data, data, epochs=30, batch_size=64, verbose=0)
centred = data - data.mean(axis=0)
singular = np.linalg.svd(centred, compute_uv=False)
pca_error = (singular[2:] ** 2).sum() / data.size
print("reconstruction mse", round(history.history["loss"][0], 4), "->", round(history.history["loss"][-1], 4),
      "PCA with 2 components:", round(float(pca_error), 4), "data variance:", round(float(centred.var()), 3))

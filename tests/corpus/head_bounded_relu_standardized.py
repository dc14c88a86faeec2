# expect: TL113
"""Functional-API regressor whose output unit is `Dense(1, activation="relu")`, trained with
`MeanSquaredError()` on targets standardised with `StandardScaler` (so half of them are negative), the
mistake of https://community.deeplearning.ai/t/loss-values-do-not-change/324182 (a `relu` output layer
for targets from -3 to 9: "the loss values do not change and stick with a specific value"). The data
are synthetic from `make_regression`.

Observed on TF 2.21 (CPU): the loss goes 1.005 after the first epoch, then 1.000 at epochs 5, 10 and
20 (the variance of the standardised targets): every prediction is 0.000, the relu unit died pushing
towards the negative half of the targets (50% of them) and gets no gradient since. The same network
with a linear output goes 0.350, 0.005, 0.003, 0.002, its predictions spanning -3.37 to 3.01.
"""
import tensorflow as tf
from sklearn.datasets import make_regression
from sklearn.preprocessing import StandardScaler

tf.keras.utils.set_random_seed(13)
X, y = make_regression(n_samples=1000, n_features=8, noise=5.0, random_state=13)
X = StandardScaler().fit_transform(X)
y = StandardScaler().fit_transform(y.reshape(-1, 1))

inputs = tf.keras.Input(shape=(8,))
hidden = tf.keras.layers.Dense(32, activation="relu")(inputs)
hidden = tf.keras.layers.Dense(16, activation="relu")(hidden)
outputs = tf.keras.layers.Dense(1, activation="relu")(hidden)
model = tf.keras.Model(inputs=inputs, outputs=outputs)

model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss=tf.keras.losses.MeanSquaredError())
history = model.fit(X, y, epochs=20, batch_size=32, verbose=0)
print("loss, epochs 1, 5, 10, 20:", [round(history.history["loss"][i], 3) for i in (0, 4, 9, 19)])
pred = model.predict(X, verbose=0)
print(f"predictions: min {pred.min():.3f}, max {pred.max():.3f}; negative targets: {(y < 0).mean():.2f}")

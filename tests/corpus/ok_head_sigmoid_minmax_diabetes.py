# expect: none
"""Regression with a `sigmoid` output unit on targets first scaled into [0, 1] with `MinMaxScaler`, the
trick of the answer to https://stats.stackexchange.com/questions/233499/neural-networks-bounded-output
("A trick for bounded output range is to scale the target values between (0,1) and use sigmoid
output"); predictions are mapped back with `inverse_transform`. The data are scikit-learn's bundled
`load_diabetes` (targets 25 to 346), nothing is downloaded. The near miss of TL113: a bounded output,
but the targets are proved to lie inside its range.

Observed on TF 2.21 (CPU): loss 0.0538, 0.0282, 0.0277, 0.0266 at epochs 1, 5, 10, 20; predictions
mapped back span 61 to 285, mean absolute error 42.0 (in the targets' units).
"""
import numpy as np
import tensorflow as tf
from sklearn.datasets import load_diabetes
from sklearn.preprocessing import MinMaxScaler

tf.keras.utils.set_random_seed(15)
X, y = load_diabetes(return_X_y=True)
target_scaler = MinMaxScaler()
y_scaled = target_scaler.fit_transform(y.reshape(-1, 1))

model = tf.keras.Sequential([
    tf.keras.Input(shape=(10,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse")
history = model.fit(X, y_scaled, epochs=20, batch_size=32, verbose=0)
print("loss, epochs 1, 5, 10, 20:", [round(history.history["loss"][i], 4) for i in (0, 4, 9, 19)])
pred = target_scaler.inverse_transform(model.predict(X, verbose=0))
print(f"predictions: min {pred.min():.0f}, max {pred.max():.0f}; MAE {np.abs(pred[:, 0] - y).mean():.1f}")

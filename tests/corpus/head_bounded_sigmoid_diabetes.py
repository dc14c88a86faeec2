# expect: TL113
"""Regression of the diabetes progression score (scikit-learn's bundled `load_diabetes`, targets 25 to
346) with a `sigmoid` output unit and MSE, the belief voiced in
https://ai.stackexchange.com/questions/26760/why-is-no-activation-function-needed-for-the-output-layer-of-a-neural-network-fo
("In most tutorials, the output layer uses 'sigmoid' to bring the results back to a nice number between
0 and 1"; the answer: in regression "you want to learn a function whose outputs can be any number").
The data ship with scikit-learn, nothing is downloaded.

Observed on TF 2.21 (CPU): the loss goes 28,837 after the first epoch and 28,771 from the fifth to the
twentieth, frozen: every prediction is 1.0000 (the sigmoid saturated, its gradient vanished) while the
targets run from 25 to 346 (mean 152.1). The same model with a linear output goes 28,385, 3,534,
2,941, 2,901 at epochs 1, 5, 10, 20, its predictions spanning 49 to 307.
"""
import tensorflow as tf
from sklearn.datasets import load_diabetes

tf.keras.utils.set_random_seed(12)
X, y = load_diabetes(return_X_y=True)

model = tf.keras.Sequential([
    tf.keras.Input(shape=(10,)),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(64, activation="relu"),
    tf.keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer=tf.keras.optimizers.Adam(0.01), loss="mse", metrics=["mae"])
history = model.fit(X, y, epochs=20, batch_size=32, verbose=0)
print("loss, epochs 1, 5, 10, 20:", [round(history.history["loss"][i], 1) for i in (0, 4, 9, 19)])
pred = model.predict(X, verbose=0)
print(f"predictions: min {pred.min():.4f}, max {pred.max():.4f}; targets: min {y.min():.0f}, max {y.max():.0f}, mean {y.mean():.1f}")

# expect: none
"""A subclassed regressor whose output unit uses `relu` because the quantity is never negative, trained
with MAE on scikit-learn's bundled `load_diabetes` targets (all between 25 and 346), the choice
discussed in https://community.deeplearning.ai/t/relu-for-output-layer/5215 ("If we want to build a
regression with non-negative outputs, can ReLu be used as the activation function in the output
layer?" - "The short answer to your question is yes"). The near miss of TL113: a bounded output, but
every target is inside [0, inf).

Observed on TF 2.21 (CPU): loss (MAE) 147.1, 52.9, 45.0, 43.4 at epochs 1, 5, 10, 20; predictions 38
to 306.
"""
import tensorflow as tf
from sklearn.datasets import load_diabetes


class ProgressionRegressor(tf.keras.Model):
    def __init__(self):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.out = tf.keras.layers.Dense(1, activation="relu")

    def call(self, inputs):
        return self.out(self.hidden(inputs))


tf.keras.utils.set_random_seed(16)
X, y = load_diabetes(return_X_y=True)
model = ProgressionRegressor()
model.compile(optimizer=tf.keras.optimizers.Adam(0.05), loss="mae")
history = model.fit(X, y, epochs=20, batch_size=32, verbose=0)
print("loss, epochs 1, 5, 10, 20:", [round(history.history["loss"][i], 1) for i in (0, 4, 9, 19)])
pred = model.predict(X, verbose=0)
print(f"predictions: min {pred.min():.0f}, max {pred.max():.0f}")

# expect: TL114
"""Three-class classifier built with `Sequential.add`, a 3-unit `softmax` output and
`loss="mean_squared_error"` on the integer labels of `make_classification(n_classes=3)`, reshaped to a
column. It follows https://example-a.com/answer/66908204 ("Can I use MSE as loss function and label
encoding in classification problem?"; the answer: MSE only worked there because the labels had been
one-hot encoded with `to_categorical`). Here they are not. The data are synthetic.

Observed on TF 2.21 (CPU): the loss hardly moves, 1.151, 1.142, 1.134 at epochs 1, 5, 10, and the
argmax accuracy is 0.249, below chance (0.33); the head stays near 1/3 on every unit. With
`sparse_categorical_crossentropy` and nothing else changed: 1.219, 0.725, 0.576 and accuracy 0.793.
"""
import numpy as np
from sklearn.datasets import make_classification
from tensorflow.keras.layers import Dense
from tensorflow.keras.models import Sequential
from tensorflow.keras.utils import set_random_seed

set_random_seed(20)
X, y = make_classification(n_samples=1500, n_features=10, n_classes=3, n_informative=4, random_state=20)

model = Sequential()
model.add(Dense(32, activation="relu", input_dim=10))
model.add(Dense(3, activation="softmax"))
model.compile(loss="mean_squared_error", optimizer="sgd", metrics=["accuracy"])
history = model.fit(X, y.reshape(-1, 1), epochs=10, batch_size=32, verbose=0)
print("loss, epochs 1, 5, 10:", [round(history.history["loss"][i], 3) for i in (0, 4, 9)])
pred = model.predict(X, verbose=0)
print(f"argmax accuracy {(pred.argmax(axis=1) == y).mean():.3f} (chance 0.33)")
print("mean output per unit:", np.round(pred.mean(axis=0), 3))

# expect: none
"""Two-unit `softmax` output with `BinaryCrossentropy()` on one-hot rows, the setting of
https://discuss.tensorflow.org/t/unexpected-value-of-binary-crossentropy-loss-function-in-classifier-network-with-two-outputs/11073
(`Dense(2, activation='softmax')`, `BinaryCrossentropy()`, `train_y = [[0, 1]]`). With one-hot rows each
unit has its own target, so the binary loss lines up (averaged over the two units it equals the
categorical cross-entropy, since the two probabilities sum to one). The near miss of TL117: the labels are `to_categorical(y, 2)`, not ids.
The data are `make_moons`.

Observed on TF 2.21 (CPU): loss 0.50, 0.29, 0.25, 0.23, 0.21 over 5 epochs, accuracy 0.91.
"""
from sklearn.datasets import make_moons
from tensorflow import keras

keras.utils.set_random_seed(27)
X, y = make_moons(n_samples=2000, noise=0.15, random_state=27)
y_onehot = keras.utils.to_categorical(y, 2)

nn = keras.Sequential([
    keras.Input(shape=(2,)),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(2, activation="softmax"),
])
nn.compile(loss=keras.losses.BinaryCrossentropy(), optimizer="adam", metrics=["categorical_accuracy"])
history = nn.fit(X, y_onehot, epochs=5, batch_size=32, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("accuracy:", round(history.history["categorical_accuracy"][-1], 3))

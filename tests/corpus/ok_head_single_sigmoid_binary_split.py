# expect: none
"""Binary classifier with one `sigmoid` unit and `binary_crossentropy`, on two classes made by
`make_classification` and split with `train_test_split`: the pairing the answer in
https://boohere.com/it/detail/80265.html calls already correct ("Il tuo modello sigmoid +
binary_crossentropy ... è già corretto"). The near miss of TL112: one output unit, but the targets are
proved to have two classes, which one sigmoid unit represents.

Observed on TF 2.21 (CPU): loss 0.81, 0.65, 0.57, 0.52, 0.49 over 5 epochs, test accuracy 0.77.
"""
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from tensorflow import keras

keras.utils.set_random_seed(9)
X, y = make_classification(n_samples=2000, n_features=20, n_informative=6, random_state=9)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.25, random_state=9)

model = keras.Sequential([
    keras.Input(shape=(20,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(1, activation="sigmoid"),
])
model.compile(optimizer="adam", loss="binary_crossentropy", metrics=["accuracy"])
history = model.fit(X_train, y_train, epochs=5, batch_size=32, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("test accuracy:", round(model.evaluate(X_test, y_test, verbose=0)[1], 3))

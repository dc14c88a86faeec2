# expect: TL104
"""Synthetic multi-class data from scikit-learn's `make_classification`, whose labels are integer class ids
(0, 1, 2), split with `train_test_split` and fed to a model compiled with `categorical_crossentropy`, which
wants one-hot rows. The integer-labels-meet-categorical-loss mistake of keras-team/keras#7339 and
https://github.com/DeepLearningSandbox/DeepLearningSandbox/issues/3 ("You are passing a target array of
shape (32, 1) while using as loss `categorical_crossentropy`"), with the labels made by sklearn.

Observed on TF 2.21 (CPU, Keras 3.15, scikit-learn 1.9, which this program needs): `y_train` has shape
(480,) and dtype int64 ([0 0 1 1 2 1 0 1] ...), and the first batch of `fit` fails with "ValueError:
Arguments `target` and `output` must have the same rank (ndim). Received: target.shape=(32,),
output.shape=(32, 3)". With `tf.keras.utils.to_categorical(y_train, 3)` (or the sparse loss) it trains."""
from sklearn.datasets import make_classification
from sklearn.model_selection import train_test_split
from tensorflow import keras

N_CLASSES = 3

X, y = make_classification(n_samples=600, n_features=20, n_informative=6, n_classes=N_CLASSES, random_state=0)
X_train, X_test, y_train, y_test = train_test_split(X, y, test_size=0.2, random_state=0)
print("y_train", y_train.shape, y_train.dtype, y_train[:8])

model = keras.Sequential([
    keras.Input(shape=(20,)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(N_CLASSES, activation="softmax"),
])
model.compile(optimizer="adam", loss="categorical_crossentropy", metrics=["accuracy"])
history = model.fit(X_train, y_train, epochs=5, batch_size=32, validation_data=(X_test, y_test), verbose=0)
print({name: [round(v, 3) for v in values] for name, values in history.history.items()})

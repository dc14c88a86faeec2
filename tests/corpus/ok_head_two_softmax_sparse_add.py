# expect: none
"""Binary image task (trouser vs bag) written the "general" way of
https://probablyiris.com/tensorflow-basic-deep-learning-workflow-for-classification-task ("set the number
of neurons in the output layer as 2 ... `Dense(2, activation='softmax')`"), with integer labels 0/1 and
`sparse_categorical_crossentropy`, built with `Sequential.add`. The near miss of TL117: two softmax units
and class ids, but a categorical loss. Fashion-MNIST is not downloaded: the 28x28 images are synthetic
(two fixed random shapes under noise); labels from `np.random.randint`.

Observed on TF 2.21 (CPU): loss 0.301, 0.030, 0.011 over 3 epochs, validation accuracy 0.995, 0.995,
1.000.
"""
import numpy as np
from tensorflow import keras

keras.utils.set_random_seed(28)
labels = np.random.randint(0, 2, size=2000)
shapes = (np.random.rand(2, 28, 28) < 0.3).astype("float32")
images = np.clip(shapes[labels] + np.random.normal(0, 2.0, size=(2000, 28, 28)), 0, 1)

model = keras.Sequential()
model.add(keras.Input(shape=(28, 28)))
model.add(keras.layers.Flatten())
model.add(keras.layers.Dense(32, activation="relu"))
model.add(keras.layers.Dense(2, activation="softmax"))
model.compile(optimizer="adam", loss="sparse_categorical_crossentropy", metrics=["accuracy"])
history = model.fit(images, labels, epochs=3, validation_split=0.2, verbose=0)
print("loss per epoch:", [round(v, 3) for v in history.history["loss"]])
print("val accuracy per epoch:", [round(v, 3) for v in history.history["val_accuracy"]])

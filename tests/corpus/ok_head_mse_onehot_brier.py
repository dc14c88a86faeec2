# expect: none
"""Digit classifier with a 10-unit `softmax` head trained with `loss="mean_squared_error"` on one-hot
labels from `to_categorical`, the code of https://example-a.com/answer/66908204 ("Can I use MSE as loss
function and label encoding in classification problem?"; the answer: "You have manually converted your
labels to one-hot encoding already via to_categorical"). MSE against one-hot rows is the Brier score
and trains. The near miss of TL114: a regression loss on a classifier, but the targets are one-hot rows,
not class ids. MNIST is not downloaded: the 784-pixel digits are synthetic (a random stroke pattern
per class under noise); labels from `np.random.randint`.

Observed on TF 2.21 (CPU): loss 0.0801, 0.0588, 0.0165, 0.0045, 0.0019 over 5 epochs, accuracy 0.355
after the first epoch and 1.000 after the fifth.
"""
import numpy as np
from tensorflow.keras import layers, models
from tensorflow.keras.utils import set_random_seed, to_categorical

set_random_seed(21)
train_labels = np.random.randint(0, 10, size=3000)
strokes = (np.random.rand(10, 28 * 28) < 0.2).astype("float32")
train_images = np.clip(strokes[train_labels] + np.random.normal(0, 1.5, size=(3000, 28 * 28)), 0, 1)

network = models.Sequential()
network.add(layers.Input(shape=(28 * 28,)))
network.add(layers.Dense(512, activation="relu"))
network.add(layers.Dense(10, activation="softmax"))
network.compile(optimizer="rmsprop", loss="mean_squared_error", metrics=["accuracy"])

train_labels = to_categorical(train_labels)
history = network.fit(train_images, train_labels, epochs=5, batch_size=128, verbose=0)
print("loss per epoch:", [round(v, 4) for v in history.history["loss"]])
print("accuracy per epoch:", [round(v, 3) for v in history.history["accuracy"]])

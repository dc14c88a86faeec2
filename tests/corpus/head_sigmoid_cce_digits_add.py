# expect: TL111
"""Digit classifier built with `Sequential.add` whose 10-unit output uses `tf.nn.sigmoid` and whose loss
is the function `keras.losses.categorical_crossentropy` on `to_categorical` labels, the setup asked
about in https://library.kiwix.org/datascience.stackexchange.com_en_all_2021-04/A/question/39264.html
("digit classification with sigmoid at the output layer, it works ... how does it work?").
MNIST is not downloaded here: the 28x28 "digits" are synthetic (a fixed random stroke pattern per
class under pixel noise, scaled to [0, 1]), labels from `np.random.randint`.

Observed on TF 2.21 (CPU): written as `activation=tf.nn.sigmoid`, the output carries no cached logits,
so Keras divides the ten sigmoid scores by their sum before the log. It learns slowly: loss 2.19,
1.98, 1.73, 1.37, 0.92 over 5 epochs, validation accuracy 0.44 after the first (with `tf.nn.softmax`
and everything else the same: loss 1.84, 0.97, 0.51, 0.30, 0.20 and 0.87 after the first). The
outputs are not probabilities: the ten scores of a digit sum to 0.84 on average and the top score
averages 0.46 (softmax: 1.00 and 0.88), e.g. [0.60 0.03 0.10 0.02 0.04 0.07 0.07 0.04 0.03 0.04].
"""
import numpy as np
import tensorflow as tf
from tensorflow import keras
from tensorflow.keras.layers import Dense, Dropout, Flatten

keras.utils.set_random_seed(2)
num_classes = 10

prototypes = (np.random.rand(num_classes, 28, 28) < 0.15).astype("float32")
y_train = np.random.randint(0, num_classes, size=3000)
x_train = np.clip(prototypes[y_train] + np.random.normal(0, 0.5, size=(3000, 28, 28)), 0, 1).astype("float32")
y_train = keras.utils.to_categorical(y_train, num_classes)

model = keras.Sequential()
model.add(keras.Input(shape=(28, 28)))
model.add(Flatten())
model.add(Dense(128, activation=tf.nn.relu))
model.add(Dropout(0.2))
model.add(Dense(num_classes, activation=tf.nn.sigmoid))

model.compile(optimizer="sgd", loss=keras.losses.categorical_crossentropy, metrics=["accuracy"])
history = model.fit(x_train, y_train, batch_size=64, epochs=5, validation_split=0.2, verbose=0)
for epoch, (loss, acc) in enumerate(zip(history.history["loss"], history.history["val_accuracy"]), 1):
    print(f"epoch {epoch}: loss {loss:.3f}, val_accuracy {acc:.3f}")

scores = model.predict(x_train[:500], verbose=0)
print(np.round(scores[0], 2))
print(f"sum of the ten scores: mean {scores.sum(axis=1).mean():.2f}, max score mean {scores.max(axis=1).mean():.2f}")

"""A tabular + MNIST classifier written for another machine: its arrays and tables sit under data/, MNIST
comes from keras.datasets (a download). Only the normalisation statistics (argv[1]) exist here.
The bug: a softmax output given to a loss built with from_logits=True."""
import importlib.util
import sys

import numpy as np
import tensorflow as tf
from tensorflow import keras

(x_train, y_train), (x_test, y_test) = keras.datasets.mnist.load_data()
features = np.load("data/features.npy")
extra = np.loadtxt("data/extra.csv", delimiter=",")
more = np.genfromtxt("data/more.csv", delimiter=",")
columns = [x_train.reshape(len(x_train), -1) / 255.0, features, extra, more]
if importlib.util.find_spec("pandas") is not None:
    import pandas as pd

    table = pd.read_csv("data/table.csv")
    columns.append(table.drop(columns=["label"]).to_numpy())
if importlib.util.find_spec("PIL") is not None:
    from PIL import Image

    thumb = np.asarray(Image.open("data/thumb.png"), dtype="float32")
    columns.append(np.repeat(thumb.reshape(1, -1)[:, :4], len(x_train), axis=0) / 255.0)
if importlib.util.find_spec("cv2") is not None:
    import cv2

    mask = cv2.imread("data/mask.png", 0)
    columns.append(np.repeat(mask.reshape(1, -1)[:, :4], len(x_train), axis=0) / 255.0)

statistics = np.load(sys.argv[1])  # exists: must be read as it is
if statistics.shape != (3,) or statistics[0] != 7.0:
    raise SystemExit(f"the statistics file was not read as it is: {statistics!r}")

x = np.concatenate(columns, axis=1).astype("float32")
y = y_train.astype("int32")

model = keras.Sequential([
    keras.Input((x.shape[1],)),
    keras.layers.Dense(32, activation="relu"),
    keras.layers.Dense(10, activation="softmax"),
])
model.load_weights("checkpoints/last.weights.h5")  # resume: not on this machine
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-3)

for epoch in range(3):
    for start in range(0, len(x), 32):
        with tf.GradientTape() as tape:
            loss = loss_fn(y[start:start + 32], model(x[start:start + 32], training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))

"""The seed-1 head, small: a frozen conv backbone with non-negative features (like VGG16's), then
GlobalAveragePooling2D, Dense(64, relu) and Dense(2, softmax). Shared by the seed-1 test scripts."""
import numpy as np
from tensorflow import keras

rng = np.random.default_rng(0)
images = rng.uniform(0.0, 255.0, size=(32, 24, 24, 3)).astype("float32")
labels = np.eye(2, dtype="float32")[rng.integers(0, 2, size=32)]

keras.utils.set_random_seed(0)
backbone = keras.Sequential([
    keras.Input((24, 24, 3)),
    keras.layers.Conv2D(64, 3, activation="relu"),
    keras.layers.MaxPooling2D(),
    keras.layers.Conv2D(512, 3, activation="relu"),
])
backbone.trainable = False
model = keras.Sequential([
    backbone,
    keras.layers.GlobalAveragePooling2D(),
    keras.layers.Dense(64, activation="relu"),
    keras.layers.Dense(2, activation="softmax"),
])

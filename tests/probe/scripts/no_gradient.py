"""Builds and runs a model but never calls tape.gradient (inference only)."""
import numpy as np
from tensorflow import keras

model = keras.Sequential([keras.Input((4,)), keras.layers.Dense(2)])
print(model(np.ones((1, 4), dtype="float32")).shape)
# expect: skip (a fault fixture: never calls tape.gradient)

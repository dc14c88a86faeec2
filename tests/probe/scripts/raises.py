"""Raises in the user's own code while building the batch."""
import numpy as np


def load_batch(path):
    data = np.zeros((4, 4))
    return data[:, 7]


batch = load_batch("data.npy")
# expect: error

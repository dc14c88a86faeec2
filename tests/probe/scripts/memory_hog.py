"""Allocates far more memory than the probe's --memory-limit allows."""
import numpy as np

features = np.ones(int(6e8))
print(features.sum())
# expect: skip (a fault fixture for --memory-limit)

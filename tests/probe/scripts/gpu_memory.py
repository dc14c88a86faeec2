"""For benchmarks/probe_gpu_check.sh: trains a few steps and writes where they ran and how much GPU
memory TensorFlow holds (memory growth keeps it small) to the JSON file named by argv[1]."""
import json
import sys

import numpy as np
import tensorflow as tf
from tensorflow import keras

x = np.random.default_rng(0).normal(size=(64, 32)).astype("float32")
y = np.arange(64) % 4
model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"), keras.layers.Dense(4)])
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = keras.optimizers.Adam(1e-3)
gpus = tf.config.list_physical_devices("GPU")
info = {"gpus": [g.name for g in gpus],
        "memory_growth": [tf.config.experimental.get_memory_growth(g) for g in gpus]}
for step in range(3):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    info["gradient_device"] = grads[0].device
    if gpus:
        memory = tf.config.experimental.get_memory_info("GPU:0")
        info["gpu_memory_peak_mb"] = round(memory["peak"] / 2**20, 1)
    with open(sys.argv[1], "w") as handle:
        json.dump(info, handle)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
# expect: skip (for benchmarks/probe_gpu_check.sh: needs an output path)

"""How much the runtime probe slows the training steps it measures.

Runs the same eager GradientTape steps of a small script twice in one process, unprobed and then probed
(instrumentation installed, every step measured: gradients, snapshots, updates), and prints the ratio.
TensorFlow's import and the first (tracing, warm-up) steps are excluded. Target: at most 1.3x.

    .venv/bin/python benchmarks/probe_overhead.py [--steps 10] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time

ROUNDS = 5


def build(keras, kind: str):  # type: ignore[no-untyped-def]
    import numpy as np

    keras.utils.set_random_seed(0)
    rng = np.random.default_rng(0)
    if kind == "cnn":
        x = rng.uniform(0, 1, size=(64, 32, 32, 3)).astype("float32")
        y = rng.integers(0, 10, size=64)
        model = keras.Sequential([
            keras.Input((32, 32, 3)),
            keras.layers.Conv2D(32, 3, activation="relu"), keras.layers.MaxPooling2D(),
            keras.layers.Conv2D(64, 3, activation="relu"), keras.layers.MaxPooling2D(),
            keras.layers.Flatten(), keras.layers.Dense(128, activation="relu"), keras.layers.Dropout(0.2),
            keras.layers.Dense(10),
        ])
    else:
        x = rng.normal(size=(64, 32)).astype("float32")
        y = rng.integers(0, 10, size=64)
        model = keras.Sequential([keras.Input((32,)), keras.layers.Dense(64, activation="relu"),
                                  keras.layers.Dense(10)])
    return model, x, y


def run_steps(tf, model, x, y, loss_fn, optimizer, steps: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        float(loss)  # wait for the step to finish (GPU)
        times.append(time.perf_counter() - start)
    return times


def measure(kind: str, steps: int) -> tuple[float, float]:
    import tensorflow as tf
    from tensorflow import keras

    from tapelint.probe.instrument import installed
    from tapelint.probe.measure import Recorder

    model, x, y = build(keras, kind)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.Adam(1e-3)
    run_steps(tf, model, x, y, loss_fn, optimizer, 3)  # warm-up: kernels, optimizer slots
    plain: list[float] = []
    probed: list[float] = []
    # Interleaved rounds, so that a neighbour's load on a shared machine hits both sides alike.
    for _ in range(ROUNDS):
        plain += run_steps(tf, model, x, y, loss_fn, optimizer, steps)
        # The probe measures every one of these steps; its stop at the next gradient call is not timed.
        with installed(Recorder(steps + 1)):
            probed += run_steps(tf, model, x, y, loss_fn, optimizer, steps)
    return statistics.median(plain), statistics.median(probed)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--device", choices=("auto", "cpu"), default="auto")
    args = parser.parse_args()
    if args.device == "cpu":
        os.environ["CUDA_VISIBLE_DEVICES"] = "-1"
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    import tensorflow as tf

    for gpu in tf.config.list_physical_devices("GPU"):
        tf.config.experimental.set_memory_growth(gpu, True)
    device = "GPU" if tf.config.list_physical_devices("GPU") else "CPU"
    print(f"probe overhead per training step, median of {ROUNDS} x {args.steps} steps, on {device} "
          f"(TensorFlow {tf.__version__}; import excluded)")
    worst = 0.0
    for kind, label in (("cnn", "small CNN, 32x32x3 batch of 64 (the target case)"),
                        ("mlp", "tiny MLP, batch of 64 (a worst case: the step is almost free)")):
        plain, probed = measure(kind, args.steps)
        ratio = probed / plain
        if kind == "cnn":
            worst = ratio
        print(f"  {label}: unprobed {plain * 1e3:.2f} ms, probed {probed * 1e3:.2f} ms, ratio {ratio:.2f}x")
    print(f"ratio (target case): {worst:.2f}x (target <= 1.3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

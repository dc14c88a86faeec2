"""How much the runtime probe slows the training steps it measures, against the user's own step as they run it.

Runs the same GradientTape step of a small model in one process, unprobed and probed, in two styles:
- eager: the step is a plain Python function (the probe measures it in place);
- graph: the step is a `@tf.function` (the user's own step runs as a graph; the probe runs it as a graph
  too, measuring through host callbacks, and, for comparison, eagerly as `--functions eager` does).
Every probed step is measured (gradients, weight snapshots, updates). A traced step keeps its values in the graph
(or hands them to one host callback) and the probe measures them after the step, at the latest when the probed
steps are over: that work is timed apart ("measured afterwards", per step). TensorFlow's import, tracing and the
first (warm-up) steps are excluded; unprobed and probed rounds are interleaved so a neighbour's load on a shared
machine hits both alike. Target: the probed step at most 1.3x the user's own step.

    .venv/bin/python benchmarks/probe_overhead.py [--steps 10] [--rounds 5] [--device cpu]
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from typing import Any


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


def make_step(tf, model, loss_fn, optimizer):  # type: ignore[no-untyped-def]
    def step(x, y):  # type: ignore[no-untyped-def]
        with tf.GradientTape() as tape:
            loss = loss_fn(y, model(x, training=True))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss

    return step


def timed(step, x, y, steps: int) -> list[float]:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(steps):
        start = time.perf_counter()
        float(step(x, y))  # float(): wait for the step to finish (GPU)
        times.append(time.perf_counter() - start)
    return times


def probed(recorder, mode: str, step, x, y, steps: int, times: list[float], after: list[float]) -> None:  # type: ignore[no-untyped-def]
    """`steps` probed steps, then the measuring the recorder still holds (what the probe does once they are over)."""
    from tapelint.probe.instrument import installed

    with installed(recorder, mode):
        times += timed(step, x, y, steps)
        start = time.perf_counter()
        recorder.finish()
        after.append((time.perf_counter() - start) / steps)


def measure(kind: str, steps: int, rounds: int) -> dict[str, Any]:
    import tensorflow as tf
    from tensorflow import keras

    from tapelint.probe.instrument import installed
    from tapelint.probe.measure import Recorder

    model, x, y = build(keras, kind)
    loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
    optimizer = keras.optimizers.Adam(1e-3)
    x, y = tf.constant(x), tf.constant(y)
    eager_step = make_step(tf, model, loss_fn, optimizer)
    # Two tf.functions of the same step: one traced as the user runs it, one traced under the probe (with
    # its callbacks). Each is traced and warmed up before timing.
    user_graph = tf.function(make_step(tf, model, loss_fn, optimizer))
    probed_graph = tf.function(make_step(tf, model, loss_fn, optimizer))
    probed_eager = tf.function(make_step(tf, model, loss_fn, optimizer))
    timed(eager_step, x, y, 3)
    timed(user_graph, x, y, 3)
    with installed(Recorder(10 ** 6), "graph"):
        timed(probed_graph, x, y, 3)
    names = ("eager", "eager probed", "graph", "graph probed", "graph probed eagerly")
    times: dict[str, list[float]] = {k: [] for k in names}
    after: dict[str, list[float]] = {k: [] for k in names}
    # Per round, each probed median over the user's own median of the same round, next to it in time: a load burst
    # from a neighbour on a shared machine then spoils one round's ratio, not the figure.
    ratios: dict[str, list[float]] = {"eager": [], "graph": [], "graph eagerly": []}
    for _ in range(rounds):
        # A recorder per round that measures every step and never stops within it.
        user = statistics.median(timed(eager_step, x, y, steps))
        probed(Recorder(steps + 1), "graph", eager_step, x, y, steps, times["eager probed"], after["eager probed"])
        times["eager"].append(user)
        ratios["eager"].append(statistics.median(times["eager probed"][-steps:]) / user)
        user = statistics.median(timed(user_graph, x, y, steps))
        probed(Recorder(steps + 1), "graph", probed_graph, x, y, steps, times["graph probed"], after["graph probed"])
        times["graph"].append(user)
        ratios["graph"].append(statistics.median(times["graph probed"][-steps:]) / user)
        tf.config.run_functions_eagerly(True)
        try:
            probed(Recorder(steps + 1), "eager", probed_eager, x, y, steps, times["graph probed eagerly"],
                   after["graph probed eagerly"])
        finally:
            tf.config.run_functions_eagerly(False)
        ratios["graph eagerly"].append(statistics.median(times["graph probed eagerly"][-steps:]) / user)
    result = {k: statistics.median(v) for k, v in times.items()}
    # Everything the probe costs, per step: the mean step (with the measuring done between steps) and what is left
    # to measure at the end.
    result.update({f"{k} all-in": statistics.mean(v) + statistics.mean(after[k]) for k, v in times.items()
                   if after[k]})
    result.update({f"{k} mean": statistics.mean(v) for k, v in times.items()})
    result.update({f"{k} after": statistics.median(v) for k, v in after.items() if v})
    result.update({f"{k} ratio": statistics.median(v) for k, v in ratios.items()})
    result.update({f"{k} ratio range": (min(v), max(v)) for k, v in ratios.items()})  # type: ignore[misc]
    return result


def spread(m: dict[str, Any], kind: str) -> str:
    low, high = m[f"{kind} ratio range"]
    return f"{m[f'{kind} ratio']:.2f}x (rounds {low:.2f}-{high:.2f}x)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=5)
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
    print(f"probe overhead per training step, median of {args.rounds} x {args.steps} steps, on {device} "
          f"(TensorFlow {tf.__version__}; import, tracing and warm-up excluded); a ratio is the median over rounds "
          f"of the probed steps' median over the user's own steps' median in the same round")
    worst = 0.0
    for kind, label in (("cnn", "small CNN, 32x32x3 batch of 64"),
                        ("mlp", "tiny MLP, batch of 64 (a worst case: the step is almost free)")):
        m = measure(kind, args.steps, args.rounds)
        print(f"  {label}:")
        print(f"    eager step (no tf.function): user {m['eager'] * 1e3:.2f} ms, probed {m['eager probed'] * 1e3:.2f} ms,"
              f" ratio {spread(m, 'eager')}; measured afterwards {m['eager probed after'] * 1e3:.2f} ms per step")
        print(f"    @tf.function step:           user {m['graph'] * 1e3:.2f} ms, probed as a graph "
              f"{m['graph probed'] * 1e3:.2f} ms, ratio {spread(m, 'graph')}; measured afterwards "
              f"{m['graph probed after'] * 1e3:.2f} ms per step")
        print(f"      all-in, means: eager {m['eager probed all-in'] / m['eager mean']:.2f}x, graph "
              f"{m['graph probed all-in'] / m['graph mean']:.2f}x the user's mean step (the probed steps, the "
              "measuring between them and at the end)")
        print(f"      (--functions eager instead: {m['graph probed eagerly'] * 1e3:.2f} ms, "
              f"{spread(m, 'graph eagerly')} the user's graph step)")
        worst = max(worst, m["eager ratio"], m["graph ratio"])
    print(f"worst ratio to the user's own step, both models, eager and graph: {worst:.2f}x (target <= 1.3x)")
    return 0


if __name__ == "__main__":
    sys.exit(main())

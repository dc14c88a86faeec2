"""Static pass speed inside one file: training code of about 1k, 2k, 4k and 8k lines, in two series.

    python benchmarks/size_series.py                  # both series, 1k, 2k, 4k, 8k lines
    python benchmarks/size_series.py --series ordinary --sizes 1000 8800 --repeat 3

"generated": each file is many different training programs in one module (subclassed and Sequential models, custom
layers, losses, `tf.function` train and test steps with tapes, clipping, metrics, epoch loops over
datasets, evaluation), every one with its own names, a few of them with real findings. For each size the
script prints tapelint's time and its ratio to a bare `libcst.parse_module` of the same text and to that
parse plus libcst's PositionProvider, all measured in the same run (CPU time of this process). Each of
`--repeat` rounds times the three one after another, so that a round's figures share the machine's speed
of the moment; a ratio is the median of the rounds' own ratios, with their range. Roughly linear growth
keeps the ratios flat from one size to the next.

"loops": each file is 100, 200, 400, ... copies of one module-level training loop (8 lines) that rebinds the same
names (issue 28, case 19): `--series loops --sizes 800 1600 3200 6400`.

"ordinary": each file is the correct programs of tests/corpus/ (those declared `# expect: none`, written
against `tensorflow` and `numpy` alone, setting no global mixed precision policy) one after another, cycling
through them in a fixed shuffled order, every copy's module-level names suffixed with the copy's number so
that no two programs share a name (what a long file of ordinary training code looks like; issue 25).

Each series ends with the time of its largest file over its smallest, raw and per line (linear growth: 8x
and 1x for 8k over 1k lines), and how its ratio to the bare parse moved.
"""

from __future__ import annotations

import argparse
import gc
import random
import re
import resource
import statistics
from pathlib import Path

_UNIT = '''

class Block{i}(tf.keras.layers.Layer):
    def __init__(self, units={units}, rate={rate}, **kwargs):
        super().__init__(**kwargs)
        self.units = units
        self.dense = tf.keras.layers.Dense(units, activation="relu")
        self.norm = tf.keras.layers.BatchNormalization()
        self.drop = tf.keras.layers.Dropout(rate)

    def build(self, input_shape):
        self.scale = self.add_weight(name="scale{i}", shape=(self.units,), initializer="ones")
        super().build(input_shape)

    def call(self, inputs, training=False):
        h = self.dense(inputs)
        h = self.norm(h, training=training)
        if training:
            h = self.drop(h, training=training)
        return h * self.scale


class Net{i}(tf.keras.Model):
    def __init__(self, classes={classes}):
        super().__init__()
        self.block_a = Block{i}({units})
        self.block_b = Block{i}({units2})
        self.head = tf.keras.layers.Dense(classes{head_activation})

    def call(self, x, training=False):
        h = self.block_a(x, training=training)
        h = self.block_b(h, training=training)
        return self.head(h)


def make_data{i}(n={n}, features={features}, classes={classes}):
    rng = np.random.default_rng({i})
    x = rng.normal(size=(n, features)).astype("float32")
    y = rng.integers(0, classes, size=(n,)).astype("int32")
    return tf.data.Dataset.from_tensor_slices((x, y)).shuffle(n).batch({batch})


model_{i} = Net{i}()
baseline_{i} = tf.keras.Sequential([
    tf.keras.Input(({features},)),
    tf.keras.layers.Dense({units}, activation="relu"),
    tf.keras.layers.Dropout({rate}),
    tf.keras.layers.Dense({classes}),
])
optimizer_{i} = tf.keras.optimizers.{optimizer}(learning_rate={lr})
baseline_optimizer_{i} = tf.keras.optimizers.SGD(learning_rate={lr})
loss_fn_{i} = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
train_loss_{i} = tf.keras.metrics.Mean(name="train_loss_{i}")
train_acc_{i} = tf.keras.metrics.SparseCategoricalAccuracy(name="train_acc_{i}")
val_acc_{i} = tf.keras.metrics.SparseCategoricalAccuracy(name="val_acc_{i}")


@tf.function
def train_step_{i}(x, y):
    with tf.GradientTape() as tape:
        logits = model_{i}(x, training=True)
        loss = loss_fn_{i}(y, logits)
        loss += tf.add_n(model_{i}.losses) if model_{i}.losses else 0.0
    grads = tape.gradient(loss, model_{i}.trainable_variables)
    grads, _ = tf.clip_by_global_norm(grads, {clip})
    optimizer_{i}.apply_gradients(zip(grads, model_{i}.trainable_variables))
    train_loss_{i}.update_state(loss)
    train_acc_{i}.update_state(y, logits)
    return loss


@tf.function
def test_step_{i}(x, y):
    logits = model_{i}(x, training=False)
    val_acc_{i}.update_state(y, logits)


def baseline_step_{i}(x, y):
    with tf.GradientTape() as tape:
        predictions = baseline_{i}({training_call})
        per_example = tf.keras.losses.sparse_categorical_crossentropy(y, predictions, from_logits=True)
        loss = tf.reduce_mean(per_example)
    gradients = tape.gradient(loss, baseline_{i}.trainable_variables)
    baseline_optimizer_{i}.apply_gradients(zip(gradients, baseline_{i}.trainable_variables))
    return loss


def fit_{i}(epochs={epochs}):
    train = make_data{i}()
    val = make_data{i}(n={val_n})
    history = []
    for epoch in range(epochs):
        train_loss_{i}.reset_state()
        train_acc_{i}.reset_state()
        val_acc_{i}.reset_state()
        for step, (xb, yb) in enumerate(train):
            loss = train_step_{i}(xb, yb)
            baseline_step_{i}(xb, yb)
            if step % {log_every} == 0:
                print("unit {i}", epoch, step, float(loss))
        for xb, yb in val:
            test_step_{i}(xb, yb)
        history.append((float(train_loss_{i}.result()), float(val_acc_{i}.result())))
        if len(history) > 2 and history[-1][0] > history[-2][0]:
            break
    return history
'''

_HEADER = '''"""Generated training code for tapelint's size series: many small training programs in one module."""
import numpy as np
import tensorflow as tf

tf.keras.utils.set_random_seed(0)
'''


def _unit(i: int) -> str:
    optimizers = ("Adam", "RMSprop", "SGD", "Adagrad")
    return _UNIT.format(
        i=i, units=16 + 8 * (i % 5), units2=8 + 4 * (i % 3), rate=round(0.1 + 0.05 * (i % 4), 2),
        classes=3 + i % 7, n=128 + 32 * (i % 4), features=4 + i % 9, batch=16 * (1 + i % 3),
        optimizer=optimizers[i % len(optimizers)], lr=(1e-3, 3e-4, 1e-2, 5e-3)[i % 4],
        clip=1.0 + i % 3, epochs=2 + i % 5, val_n=64 + 16 * (i % 3), log_every=5 + i % 7,
        # Every fifth unit has a softmax head fed to a from_logits loss (TL101), every seventh calls its
        # dropout model without the training flag (TL302): findings whose positions get computed.
        head_activation=', activation="softmax"' if i % 5 == 4 else "",
        training_call="x" if i % 7 == 6 else "x, training=True",
    )


def training_source(lines: int) -> str:
    """A module of about `lines` lines of training code (whole units, at least one)."""
    text = _HEADER
    unit_lines = _unit(0).count("\n")
    count = max(1, round((lines - _HEADER.count("\n")) / unit_lines))
    return text + "".join(_unit(i) for i in range(count)) + "\n\nif __name__ == '__main__':\n" + "".join(
        f"    fit_{i}()\n" for i in range(count))


_LOOP = '''model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
opt{i} = tf.keras.optimizers.Adam(learning_rate=0.001)
loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
for x, y in data:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
    grads = tape.gradient(loss, model.trainable_variables)
    opt{i}.apply_gradients(zip(grads, model.trainable_variables))
'''


def loops_source(lines: int) -> str:
    """A module of about `lines` lines of module-level training loops, each rebinding the same `model`,
    `loss_fn`, `loss` and `grads` (issue 28: a slice that reached every earlier loop made this quadratic)."""
    count = max(1, round(lines / _LOOP.count("\n")))
    return "import tensorflow as tf\n" + "".join(_LOOP.format(i=i) for i in range(count))


_CORPUS = Path(__file__).resolve().parent.parent / "tests" / "corpus"
# Programs that import anything else (standalone Keras, tf_keras, hub, torch, jax) are left out: in one module
# their imports would rebind each other's names (`keras`, `layers`).
_ORDINARY_IMPORTS = re.compile(
    r"^(import (tensorflow as tf|numpy as np|os|tempfile|time)|from tensorflow\.keras import [\w, ]+)\s*$")


def _renamed_names(source: str) -> list[tuple[int, int]]:
    """(line index, column after the name) of every occurrence of a module-level name the program binds
    itself (not an import): where a copy's suffix goes."""
    import libcst as cst
    from libcst.metadata import Assignment, MetadataWrapper, PositionProvider, ScopeProvider

    wrapper = MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
    scopes = wrapper.resolve(ScopeProvider)
    positions = wrapper.resolve(PositionProvider)
    module_scope = scopes[wrapper.module]
    imported = {a.name for a in module_scope.assignments
                if isinstance(a, Assignment) and isinstance(a.node, (cst.Import, cst.ImportFrom))}
    nodes: set[cst.CSTNode] = set()
    names: set[str] = set()
    for assignment in module_scope.assignments:
        if not isinstance(assignment, Assignment) or assignment.name in imported:
            continue
        node = assignment.node
        if isinstance(node, (cst.FunctionDef, cst.ClassDef)):
            node = node.name
        if not isinstance(node, cst.Name):
            continue
        names.add(node.value)
        nodes.add(node)
        nodes.update(access.node for access in assignment.references if isinstance(access.node, cst.Name))

    class Globals(cst.CSTVisitor):  # `global name` in a function names the module's variable
        def visit_Global(self, node: cst.Global) -> None:
            nodes.update(item.name for item in node.names if item.name.value in names)

    wrapper.module.visit(Globals())
    lines = source.splitlines(keepends=True)
    spots = []
    for node in nodes:
        end = positions[node].end
        assert lines[end.line - 1][end.column - len(node.value):end.column] == node.value  # type: ignore[attr-defined]
        spots.append((end.line - 1, end.column))
    return sorted(spots, reverse=True)


def _ordinary_programs() -> list[tuple[list[str], list[tuple[int, int]]]]:
    """The correct corpus programs that import only TensorFlow and NumPy (and a few standard modules), as
    lines with the places of their module-level names, in a fixed shuffled order."""
    programs = []
    for path in sorted(_CORPUS.glob("*.py")):
        text = path.read_text(encoding="utf-8")
        if not re.search(r"^#\s*expect:\s*none\b", text, re.MULTILINE):
            continue
        imports = [line for line in text.splitlines() if re.match(r"(import|from) \w", line)]
        if not all(_ORDINARY_IMPORTS.match(line) for line in imports) or "set_global_policy" in text:
            continue  # other libraries, or a mixed precision policy, which would hold for every program after it
        if not text.endswith("\n"):
            text += "\n"
        programs.append((text.splitlines(keepends=True), _renamed_names(text)))
    random.Random(25).shuffle(programs)
    return programs


_PROGRAMS: list[tuple[list[str], list[tuple[int, int]]]] = []


def ordinary_source(lines: int) -> str:
    """A module of about `lines` lines made of copies of the corpus's correct programs (whole programs,
    at least one), each copy's module-level names suffixed with its number."""
    if not _PROGRAMS:
        _PROGRAMS.extend(_ordinary_programs())
    out = ['"""Correct training programs of tapelint\'s corpus, one after another (size series)."""\n']
    count = 1
    copy = 0
    while count < lines or copy == 0:
        text, spots = _PROGRAMS[copy % len(_PROGRAMS)]
        renamed = list(text)
        for line, column in spots:
            renamed[line] = renamed[line][:column] + f"_{copy}" + renamed[line][column:]
        out.append("\n\n")
        out.extend(renamed)
        count += 2 + len(text)
        copy += 1
    return "".join(out)


def _cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _timed(function) -> float:  # type: ignore[no-untyped-def]
    gc.collect()
    start = _cpu()
    function()
    return _cpu() - start


SERIES = {"generated": training_source, "ordinary": ordinary_source, "loops": loops_source}


def _series(name: str, make_source, sizes: list[int], repeat: int, config) -> None:  # type: ignore[no-untyped-def]
    import libcst as cst
    from libcst.metadata import MetadataWrapper, PositionProvider

    from tapelint.engine import lint_source

    print(f"{name} series")
    print(f"{'lines':>6} {'parse s':>8} {'parse+pos s':>11} {'tapelint s':>10} {'/parse':>17} {'/parse+pos':>10} "
          f"{'findings':>8} {'s per 1k lines':>14}")
    first = None
    measured: list[tuple[int, float, float]] = []  # (lines, lint, lint / parse)
    for size in sizes:
        source = make_source(size)
        lines = source.count("\n")
        found: list = []
        rounds: list[tuple[float, float, float]] = []
        # Interleaved: the machine's speed drifts within minutes, and a round's three figures share it.
        for _ in range(repeat):
            parse = _timed(lambda: cst.parse_module(source))
            parse_pos = _timed(lambda: MetadataWrapper(cst.parse_module(source), unsafe_skip_copy=True)
                               .resolve(PositionProvider))
            lint = _timed(lambda: found.__setitem__(slice(None), lint_source(source, f"size_{size}.py", config)))
            rounds.append((parse, parse_pos, lint))
        parse, parse_pos, lint = (min(r[k] for r in rounds) for k in range(3))
        to_parse = sorted(r[2] / r[0] for r in rounds)
        to_parse_pos = statistics.median(r[2] / r[1] for r in rounds)
        spread = f"{statistics.median(to_parse):.2f} ({to_parse[0]:.2f}-{to_parse[-1]:.2f})"
        internal = sum(1 for d in found if d.code == "TL999")
        per_k = lint / lines * 1000
        first = first or per_k
        measured.append((lines, lint, statistics.median(to_parse)))
        print(f"{lines:>6} {parse:>8.2f} {parse_pos:>11.2f} {lint:>10.2f} {spread:>17} "
              f"{to_parse_pos:>10.2f} {len(found):>8} {per_k:>8.3f} ({per_k / first:.2f}x)"
              + (f"  {internal} INTERNAL ERRORS" if internal else ""))
    if len(measured) > 1:
        (small, small_s, small_p), (large, large_s, large_p) = measured[0], measured[-1]
        print(f"{name}: {large} lines / {small} lines: time {large_s / small_s:.2f}x for {large / small:.2f}x "
              f"the lines ({large_s / small_s / (large / small):.2f}x per line); "
              f"/parse {small_p:.2f} -> {large_p:.2f}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1100, 2200, 4400, 8800])
    parser.add_argument("--repeat", type=int, default=3,
                        help="rounds per size; each round times a parse, a parse with positions and a lint in turn")
    parser.add_argument("--series", nargs="+", choices=sorted(SERIES), default=["generated", "ordinary"])
    args = parser.parse_args()

    from tapelint.config import Config
    from tapelint.engine import lint_source

    config = Config()
    lint_source(training_source(200), "warmup.py", config)  # imports, registry, rule classes
    lint_source(ordinary_source(200), "warmup.py", config)
    for name in args.series:
        _series(name, SERIES[name], args.sizes, args.repeat, config)
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"peak RSS {peak:.0f} MB; CPU time of this process: seconds are the best of {args.repeat} rounds, "
          "ratios the median of the rounds' own ratios (their range in brackets)")


if __name__ == "__main__":
    main()

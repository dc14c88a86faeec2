"""Linting in forked worker processes after the parent has linted: the per-process lint thread must not be
inherited half-alive (the child would wait forever on a thread that does not exist there)."""

from __future__ import annotations

import multiprocessing
import sys

import pytest

from tapelint.config import Config
from tapelint.engine import lint_source
from tapelint.runner import lint_paths

SOURCE = "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.01)\n"


def _lint_in_child(queue) -> None:  # type: ignore[no-untyped-def]
    queue.put([d.code for d in lint_source(SOURCE, "child.py", Config())])


@pytest.mark.skipif(sys.platform != "linux", reason="fork is the default start method on Linux only")
def test_a_forked_child_lints_after_the_parent_did():
    assert [d.code for d in lint_source(SOURCE, "parent.py", Config())] == ["TL501"]
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_lint_in_child, args=(queue,))
    child.start()
    child.join(timeout=60)
    assert not child.is_alive(), "the forked child hung"
    assert queue.get(timeout=5) == ["TL501"]


def test_a_parallel_run_after_a_lint_in_this_process_finishes(tmp_path):
    assert lint_source(SOURCE, "parent.py", Config())
    for index in range(12):
        (tmp_path / f"t{index}.py").write_text(SOURCE, encoding="utf-8")
    result = lint_paths([tmp_path], Config(), jobs=2)
    assert [d.code for d in result.diagnostics] == ["TL501"] * 12


MODELS = '''import tensorflow as tf


class Classifier(tf.keras.Model):
    def __init__(self, classes=10):
        super().__init__()
        self.hidden = tf.keras.layers.Dense(64, activation="relu")
        self.out = tf.keras.layers.Dense(classes, activation="softmax")

    def call(self, x):
        return self.out(self.hidden(x))


def make_optimizer():
    return tf.keras.optimizers.Adam(1e-3)
'''

TRAIN = '''import tensorflow as tf

from project.models import Classifier, make_optimizer

model = Classifier()
optimizer = make_optimizer()
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
'''


@pytest.mark.skipif(sys.platform != "linux", reason="fork is the default start method on Linux only")
def test_a_parallel_run_shares_the_preludes_parsed_before_the_fork_and_finds_what_one_process_finds(tmp_path):
    import gc

    from tapelint import splicing
    from tapelint.runner import _load_before_fork, read_work
    from tapelint.files import discover
    from tapelint.project import ProjectIndex

    package = tmp_path / "project"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    (package / "models.py").write_text(MODELS, encoding="utf-8")
    for index in range(18):
        (package / f"train_{index}.py").write_text(TRAIN.replace("64", str(64 + index)), encoding="utf-8")
    serial = lint_paths([package], Config(), jobs=1)
    parallel = lint_paths([package], Config(), jobs=2)
    assert parallel.diagnostics == serial.diagnostics
    assert any(d.code == "TL101" for d in serial.diagnostics)  # softmax output, from_logits=True: via the prelude

    index = ProjectIndex()
    works = [read_work(f, Config(), index, None) for f in discover([package], Config(), [])]
    assert sum(w.prelude is not None for w in works) == 18
    splicing._pieces.clear()
    try:
        assert _load_before_fork(works)
        assert gc.get_freeze_count() > 0
        block = next(w.prelude for w in works if w.prelude is not None).segments[-1]
        assert any("class Classifier" in text for text in splicing._pieces), block
    finally:
        gc.unfreeze()

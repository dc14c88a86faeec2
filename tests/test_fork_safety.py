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

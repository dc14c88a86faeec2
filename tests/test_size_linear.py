"""Linting time grows linearly with the size of one file, and positions computed statement by statement
are libcst's own."""

from __future__ import annotations

import importlib.util
import resource
from pathlib import Path

import libcst as cst
import pytest
from libcst.metadata import MetadataWrapper, PositionProvider

from tapelint.analysis.facts import Facts
from tapelint.analysis.positions import LazyPositions
from tapelint import engine
from tapelint.config import Config
from tapelint.engine import lint_source

_SPEC = importlib.util.spec_from_file_location(
    "size_series", Path(__file__).resolve().parent.parent / "benchmarks" / "size_series.py")
size_series = importlib.util.module_from_spec(_SPEC)  # type: ignore[arg-type]
_SPEC.loader.exec_module(size_series)  # type: ignore[union-attr]


def _cpu() -> float:
    # All threads of the process: lint_source runs on its own large-stack thread.
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _lint_seconds(source: str, repeat: int) -> tuple[float, list]:
    best, found = float("inf"), []
    for _ in range(repeat):
        start = _cpu()
        found = lint_source(source, "generated.py", Config())
        best = min(best, _cpu() - start)
    return best, found


@pytest.mark.slow
def test_lint_time_grows_linearly_with_file_size():
    lint_source(size_series.training_source(300), "warmup.py", Config())
    sizes = (1000, 2000, 4000, 8000)
    seconds, findings = {}, {}
    for size in sizes:
        # Small files are timed best of three: their times are short enough for noise to matter.
        seconds[size], found = _lint_seconds(size_series.training_source(size), 3 if size < 8000 else 1)
        findings[size] = found
        assert not [d for d in found if d.code == "TL999"], "a rule crashed on the generated code"
    # The same programs repeated: the findings grow with the file, so the work really was done.
    assert len(findings[8000]) >= 6 * len(findings[1000]) > 0
    # Linear growth would be 2x per doubling and 8x overall; the margins absorb a shared, noisy machine.
    # Before the per-file indices this file took 35x the time of the 1k-line one (4.3x for the last doubling).
    for small, large in zip(sizes, sizes[1:]):
        assert seconds[large] / seconds[small] < 2 * 2.2, seconds
    assert seconds[8000] / seconds[1000] < 8 * 2.5, seconds


_TRICKY = (
    "# a header comment\r\n"
    "import tensorflow as tf\r\n"
    "a = 1; b = tf.constant(2)\r\n"
    "\r\n"
    "# before the decorators\r\n"
    "@tf.function\r\n"
    "# between decorators\r\n"
    "@other(\r\n"
    "    1)\r\n"
    "\r\n"
    "def step(x):\r\n"
    "    with tf.GradientTape() as tape:\r\n"
    "        y = x * x  # trailing\r\n"
    "    # a comment at the body's indentation, after its last statement\r\n"
    "    return tape.gradient(y, x)\r\n"
    "(\r\n"
    "    step\r\n"
    ")(tf.constant(1.0))\r\n"
    "class Model(tf.keras.Model):\r\n"
    "\tdef call(self, x):\r\n"
    "\t\treturn x if x is not None else '''a\r\n"
    "b'''\r\n"
    "if a: b = 2\r\n"
    "else: b = \\\r\n"
    "    3\r\n"
    "last = [\r\n"
    "    1,\r\n"
    "]"
)


def test_positions_computed_per_statement_are_libcsts():
    module = cst.parse_module(_TRICKY)
    expected = MetadataWrapper(module, unsafe_skip_copy=True).resolve(PositionProvider)
    facts = Facts(module, _TRICKY)
    lazy = LazyPositions(module, _TRICKY, lambda node: facts.top_statement.get(id(node)))
    for node, position in expected.items():
        assert lazy.get(node) == position, type(node).__name__
    # A node inside one statement is placed without a whole-file position pass.
    fresh = LazyPositions(module, _TRICKY, lambda node: facts.top_statement.get(id(node)))
    gradient = module.body[2].body.body[1].body[0].value  # type: ignore[attr-defined]
    assert fresh.get(gradient) == expected[gradient]
    # Inside a method of a class indented with tabs: only that method's statement is generated.
    returned = module.body[4].body.body[0].body.body[0].body[0].value  # type: ignore[attr-defined]
    assert fresh.get(returned) == expected[returned]
    assert fresh._full is None


def test_findings_are_the_same_as_with_a_whole_file_position_pass(monkeypatch):
    source = size_series.training_source(1600)
    lazy = lint_source(source, "generated.py", Config())

    class WholeFile(LazyPositions):
        def get(self, node, default=None):  # type: ignore[no-untyped-def]
            return self.full().get(node, default)

    monkeypatch.setattr(engine, "LazyPositions", WholeFile)
    whole = lint_source(source, "generated.py", Config())
    assert len(lazy) >= 4
    assert lazy == whole  # positions, messages and fixes (their edits carry positions too)


def test_positions_without_facts_search_the_statements():
    source = "x = 1\ny = x + 2\n"
    module = cst.parse_module(source)
    lazy = LazyPositions(module, source)
    target = module.body[1].body[0].value  # type: ignore[attr-defined]
    position = lazy.get(target)
    assert (position.start.line, position.start.column, position.end.line, position.end.column) == (2, 4, 2, 9)


_FINE_TUNE = '''
base_{i} = tf.keras.applications.MobileNetV2(include_top=False, weights=None, input_shape=(96, 96, 3))
base_{i}.trainable = False
head_{i} = tf.keras.layers.Dense(1)
optimizer_{i} = tf.keras.optimizers.Adam(1e-3)


def train_{i}(steps):
    for _ in range(steps):
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(head_{i}(tf.reduce_mean(base_{i}(tf.zeros((1, 96, 96, 3)), training=False), axis=[1, 2])))
        variables = head_{i}.trainable_variables + base_{i}.trainable_variables
        optimizer_{i}.apply_gradients(zip(tape.gradient(loss, variables), variables))


train_{i}(10)
base_{i}.trainable = True
train_{i}(10)
'''


def test_frozen_backbone_reads_the_calls_once_per_file(monkeypatch):
    """TL301 asks, for every `x.trainable = ...`, whether an optimizer that already ran is used again after
    it. That question once walked every call of the file per binding, and every call again per call of a
    training function (12 s of 13 on a 9,100-line file, issue 25); now the uses of each scope are listed
    once. Pinned by counting the calls TL301's question walks on one program and on eight of them in one
    module (linear: 8x; it was 363x here), not by timing."""
    from tapelint.analysis import facts as facts_module
    from tapelint.rules.tl301_frozen_backbone import FrozenBackbone

    walked = [0]
    asking = [False]

    class Calls(list):
        def __iter__(self):  # type: ignore[no-untyped-def]
            for site in super().__iter__():
                walked[0] += asking[0]
                yield site

    original_init = facts_module.Facts.__init__

    def init(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        original_init(self, *args, **kwargs)
        self.calls = Calls(self.calls)

    question = FrozenBackbone._after_optimizer_use

    def asked(facts, binding):  # type: ignore[no-untyped-def]
        asking[0] = True
        try:
            return question(facts, binding)
        finally:
            asking[0] = False

    monkeypatch.setattr(facts_module.Facts, "__init__", init)
    monkeypatch.setattr(FrozenBackbone, "_after_optimizer_use", staticmethod(asked))
    counts = {}
    for copies in (1, 8):
        source = "import tensorflow as tf\n" + "".join(_FINE_TUNE.format(i=i) for i in range(copies))
        walked[0] = 0
        found = [d for d in lint_source(source, "fine_tune.py", Config(), rules=(FrozenBackbone,))
                 if d.code == "TL301"]
        # Each copy's unfreezing comes after its own optimizer ran, and is told so with its own function.
        lines = source.splitlines()
        late = {d.line: d.message for d in found if "changes after" in d.message}
        assert sorted(late) == [n for n, line in enumerate(lines, 1) if line.endswith(".trainable = True")]
        for line, message in late.items():
            assert f"training with `{lines[line].split('(')[0]}()`" in message, message
        counts[copies] = walked[0]
    assert 0 < counts[8] <= 8 * 1.5 * counts[1], counts


@pytest.mark.slow
def test_long_scripts_of_ordinary_programs_ask_each_program_about_itself(monkeypatch):
    """Gradient flow and a functional model's parts are answered from what the question reads (its
    backward slice, the model's own graph), not from everything earlier in the module: in a file of many
    ordinary programs the work grows with the file, not with its square. Pinned by counting the bindings
    the gradient flow evaluates and the models `training.parts` opens, on about 1.1k and 8.8k lines."""
    from tapelint.analysis import dataflow, training

    counted = {"bindings": 0, "parts": 0}
    original_binding = dataflow._Flow.binding
    original_parts = training._parts_once

    def binding(self, *args):  # type: ignore[no-untyped-def]
        counted["bindings"] += 1
        return original_binding(self, *args)

    def parts_once(*args):  # type: ignore[no-untyped-def]
        counted["parts"] += 1
        return original_parts(*args)

    monkeypatch.setattr(dataflow._Flow, "binding", binding)
    monkeypatch.setattr(training, "_parts_once", parts_once)
    per_line = {}
    for lines in (1100, 8800):
        source = size_series.ordinary_source(lines)
        counted.update(bindings=0, parts=0)
        assert lint_source(source, "ordinary.py", Config()) == []  # correct programs, each on its own
        per_line[lines] = {key: value / source.count("\n") for key, value in counted.items()}
    for key in ("bindings", "parts"):
        assert per_line[8800][key] <= 1.5 * per_line[1100][key], (key, per_line)


@pytest.mark.slow
def test_many_training_loops_in_one_file_lint_in_linear_time():
    # Each loop rebinds `model`, `loss` and `grads`; the gradient flow's slice used to reach every earlier
    # loop, so 400 loops took 7x the time per loop of 100 (44 s). Measured as a ratio in one run.
    lint_source(size_series.loops_source(400), "warmup.py", Config())
    per_loop = {}
    for loops in (100, 400):
        source = size_series.loops_source(8 * loops)
        seconds, found = _lint_seconds(source, 2)
        assert not [d for d in found if d.code == "TL999"]
        per_loop[loops] = seconds / loops
    assert per_loop[400] / per_loop[100] < 2.0, per_loop

"""The project prelude spliced from statements parsed once per process (tapelint.incremental.splice_prelude)
is exactly the module a full parse of `prelude.text + source` gives, or is not used."""

from __future__ import annotations

import importlib.util
import textwrap
from pathlib import Path

import libcst as cst
import pytest

from tapelint import engine, project, splicing as incremental
from tapelint.analysis.parsing import parse_module
from tapelint.config import Config
from tapelint.project import ProjectIndex
from tapelint.triggers import trains

ATTRIBUTES = ("header", "footer", "default_indent", "default_newline", "has_trailing_newline", "encoding")

MODELS = '''\
"""Models of the project."""
import tensorflow as tf
from tensorflow import keras

# The width of every hidden layer.
UNITS = 32


def _activation(x):
    return tf.nn.relu(x)


@keras.saving.register_keras_serializable()
class Block(keras.layers.Layer):
    """Two dense layers."""

    def __init__(self, units=UNITS, **kwargs):
        super().__init__(**kwargs)
        self.first = keras.layers.Dense(units)
        # a comment inside the class
        self.second = keras.layers.Dense(units)

    def call(self, x, training=False):
        return self.second(_activation(self.first(x)))
        # an indented comment after the last statement

# a comment before the next statement
def build(units=UNITS):
    inputs = keras.Input((8,))
    return keras.Model(inputs, Block(units)(inputs))
'''

LOSSES = '''\
import tensorflow as tf

SCALE = 0.5  # trailing comment


@tf.function
def weighted_loss(y_true, y_pred):
    return SCALE * tf.reduce_mean(tf.square(y_true - y_pred))
'''

TRAIN = '''\
import tensorflow as tf
from models import build, Block as Residual
from losses import weighted_loss as loss_fn

model = build()
optimizer = tf.keras.optimizers.Adam(1e-3)


@tf.function
def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
'''


def _project(root: Path, train: str = TRAIN, models: str = MODELS, losses: str = LOSSES) -> tuple[Path, str]:
    (root / "models.py").write_text(models, newline="")
    (root / "losses.py").write_text(losses, newline="")
    path = root / "train.py"
    path.write_text(train, newline="")
    return path, train


def _prelude(path: Path, source: str):  # type: ignore[no-untyped-def]
    prelude = ProjectIndex().prelude(path, source)
    assert prelude is not None
    return prelude


def _assert_exact(spliced: cst.Module, text: str) -> None:
    full = cst.parse_module(text)
    assert spliced.code == full.code == text
    assert spliced.deep_equals(full)
    for name in ATTRIBUTES:
        mine, theirs = getattr(spliced, name), getattr(full, name)
        if name in ("header", "footer"):  # nodes compare by identity: compare their trees
            assert len(mine) == len(theirs) and all(a.deep_equals(b) for a, b in zip(mine, theirs)), name
        else:
            assert mine == theirs, name


def _nodes_once(module: cst.Module) -> None:
    seen: set[int] = set()

    class Walk(cst.CSTVisitor):
        def on_visit(self, node: cst.CSTNode) -> bool:
            assert id(node) not in seen, node  # one node object in two places would confuse metadata
            seen.add(id(node))
            return True

    module.visit(Walk())


@pytest.fixture(autouse=True)
def _empty_cache(monkeypatch):  # type: ignore[no-untyped-def]
    monkeypatch.setattr(incremental, "_pieces", {})
    monkeypatch.setattr(incremental, "_piece_chars", 0)


@pytest.mark.parametrize("train", [
    TRAIN,
    TRAIN.rstrip("\n"),  # no trailing newline
    "# A header comment of the file itself.\n\n" + TRAIN,
    "#!/usr/bin/env python\n# -*- coding: utf-8 -*-\n" + TRAIN,
    "# -*- coding: latin-1 -*-\n" + TRAIN,  # a text's coding line is not read (encoding says utf-8 either way)
    TRAIN + "\n# a comment at the end\n\n",
    TRAIN.replace("    ", "  "),  # the file's own indentation differs from its project's
    # No alias line: the prelude ends with an indented block, then the file's own comment lines.
    "# first\n\n# second\n" + TRAIN.replace("from models import build, Block as Residual", "from models import build")
    .replace("from losses import weighted_loss as loss_fn", "from losses import weighted_loss"),
])
def test_the_spliced_module_is_the_full_parse(tmp_path: Path, train: str):
    path, source = _project(tmp_path, train)
    prelude = _prelude(path, source)
    assert "def build" in prelude.text
    for _ in range(2):  # parsed, then from the cache
        spliced = incremental.splice_prelude(prelude, source, parse_module, parse_module)
        if spliced is None:
            assert train == TRAIN.replace("    ", "  ")  # the one case that is not certain: a full parse
            continue
        _assert_exact(spliced, prelude.text + source)
        _nodes_once(spliced)


def test_a_two_space_project_splices_exactly(tmp_path: Path):
    path, source = _project(tmp_path, TRAIN.replace("    ", "  "), MODELS.replace("    ", "  "),
                            LOSSES.replace("    ", "  "))
    prelude = _prelude(path, source)
    spliced = incremental.splice_prelude(prelude, source, parse_module, parse_module)
    assert spliced is not None and spliced.default_indent == "  "
    _assert_exact(spliced, prelude.text + source)


@pytest.mark.parametrize("train", [
    TRAIN.replace("\n", "\r\n"),  # another line break than the prelude's
    "\ufeff" + TRAIN,
    "    # an indented comment first\n" + TRAIN,
    "  )\n" + TRAIN,  # closes nothing: does not parse alone (nor whole)
])
def test_what_is_not_certain_is_parsed_whole(tmp_path: Path, train: str):
    path, source = _project(tmp_path)
    prelude = _prelude(path, source)
    assert incremental.splice_prelude(prelude, source, parse_module, parse_module) is not None
    assert incremental.splice_prelude(prelude, train, parse_module, parse_module) is None


def test_a_statement_in_two_modules_is_two_nodes(tmp_path: Path):
    # `import tensorflow as tf` is chosen from both modules: the same text twice in one prelude.
    path, source = _project(tmp_path)
    prelude = _prelude(path, source)
    pieces = incremental.prelude_pieces(prelude)
    assert pieces is not None and pieces.count("import tensorflow as tf\n") == 2
    spliced = incremental.splice_prelude(prelude, source, parse_module, parse_module)
    assert spliced is not None
    _nodes_once(spliced)


def test_the_cache_is_bounded(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(incremental, "MAX_PIECE_CHARS", 400)
    path, source = _project(tmp_path)
    prelude = _prelude(path, source)
    assert len(prelude.text) > 400
    spliced = incremental.splice_prelude(prelude, source, parse_module, parse_module)
    assert spliced is not None
    _assert_exact(spliced, prelude.text + source)
    assert 0 < incremental._piece_chars <= 400
    assert incremental._piece_chars == sum(len(text) for text in incremental._pieces)


def test_findings_are_those_of_the_full_parse(tmp_path: Path, monkeypatch):
    # A defect in an imported module (reported in losses.py) and one in the file itself (train.py).
    losses = LOSSES.replace("    return SCALE", "    scale = tf.Variable(SCALE)\n    return scale")
    train = TRAIN.replace("    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n",
                          "    loss = loss_fn(y, model(x, training=True))\n    with tf.GradientTape() as tape:\n"
                          "        pass\n")
    path, source = _project(tmp_path, train, losses=losses)
    prelude = _prelude(path, source)
    parsed: list[str] = []
    real = incremental.splice_prelude

    def counting(*args):  # type: ignore[no-untyped-def]
        result = real(*args)
        parsed.append("spliced" if result is not None else "whole")
        return result

    monkeypatch.setattr(engine, "splice_prelude", counting)
    spliced = engine.lint_source(source, str(path), Config(), prelude=prelude)
    assert parsed == ["spliced"]
    monkeypatch.setattr(engine, "splice_prelude", lambda *args: None)
    whole = engine.lint_source(source, str(path), Config(), prelude=prelude)
    assert spliced == whole
    assert {(Path(d.path).name, d.code) for d in whole} == {("losses.py", "TL403"), ("train.py", "TL003")}


def _keras_layers() -> Path | None:
    spec = importlib.util.find_spec("keras")
    if spec is None or not spec.submodule_search_locations:
        return None
    layers = Path(next(iter(spec.submodule_search_locations))) / "src" / "layers"
    return layers if layers.is_dir() else None


def _keras_preludes_splice_exactly(largest: int, monkeypatch: pytest.MonkeyPatch) -> int:
    layers = _keras_layers()
    if layers is None:
        pytest.skip("keras is not installed")
    # A lint never splices the framework's own modules; here Keras' tests only stand for a project with
    # large preludes of real code (a class of 1,800 lines), which the splice must reproduce exactly.
    monkeypatch.setattr(project, "FRAMEWORK_PACKAGES", frozenset())
    index = ProjectIndex()
    checked = 0
    for path in sorted(layers.rglob("*.py")):
        source = path.read_text(encoding="utf-8")
        if not trains(source):
            continue
        prelude = index.prelude(path, source)
        if prelude is None or len(prelude.text) > largest:
            continue
        spliced = incremental.splice_prelude(prelude, source, parse_module, parse_module)
        assert spliced is not None, path
        _assert_exact(spliced, prelude.text + source)
        checked += 1
    return checked


@pytest.mark.slow  # seconds: the fast tier stays under a minute; CI runs it
def test_the_smaller_preludes_of_keras_layers_splice_exactly(monkeypatch: pytest.MonkeyPatch):
    assert _keras_preludes_splice_exactly(largest=5_000, monkeypatch=monkeypatch) >= 3


@pytest.mark.slow
def test_every_prelude_of_keras_layers_splices_exactly(monkeypatch: pytest.MonkeyPatch):
    # 12 files of keras 3.15 (preludes of 0.1k-150k characters, 650k in all): several seconds.
    assert _keras_preludes_splice_exactly(largest=10**9, monkeypatch=monkeypatch) >= 5

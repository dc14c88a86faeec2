"""End-to-end tests of `tapelint server`: a real LSP client (pytest-lsp) drives the server over stdio."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest

pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls)")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="the language-server tests need pytest-lsp")
pytest_asyncio = pytest.importorskip("pytest_asyncio")

from lsprotocol import types  # noqa: E402
from pygls.exceptions import JsonRpcException  # noqa: E402

BUGGY = (
    "import tensorflow as tf\n"
    "optimizer = tf.keras.optimizers.Adam(lr=0.001, beta_1=0.9)\n"
    'named = tf.keras.optimizers.Adam(name="😀", lr=0.01)\n'
)
TIMEOUT = 20


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory):
    """One server for the module, started the way an editor starts it; each test works in a folder of its own."""
    workspace = tmp_path_factory.mktemp("workspace")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache"))}
    lsp_client = pytest_lsp.make_test_lsp_client()
    await lsp_client.start_io(sys.executable, "-m", "tapelint", "server", env=env, cwd=str(workspace))
    await lsp_client.initialize_session(types.InitializeParams(
        capabilities=pytest_lsp.client_capabilities("visual-studio-code"),
        root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")],
    ))
    lsp_client.workspace = workspace  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()
    await lsp_client.stop()


@pytest.fixture
def client(server, request: pytest.FixtureRequest):
    """The server, with a project folder for this test: documents and settings of other tests do not leak in."""
    project = server.workspace / request.node.name
    project.mkdir()
    # Only TL501, so that rules added later cannot change what these tests see.
    (project / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL501"]\n', encoding="utf-8")
    server.project = project
    return server


async def publish_for(client, uri: str) -> list[types.Diagnostic]:
    """Wait for the next diagnostics the server publishes for `uri`."""
    async def wait() -> list[types.Diagnostic]:
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri:
                return list(params.diagnostics)
    return await asyncio.wait_for(wait(), TIMEOUT)


async def open_document(client, name: str, text: str) -> tuple[str, list[types.Diagnostic]]:
    path = client.project / name
    path.write_text(text, encoding="utf-8")
    uri = path.as_uri()
    waiting = asyncio.ensure_future(publish_for(client, uri))
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=text)))
    return uri, await waiting


async def change_document(client, uri: str, version: int,
                          changes: list[types.TextDocumentContentChangeEvent]) -> list[types.Diagnostic]:
    waiting = asyncio.ensure_future(publish_for(client, uri))
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
        content_changes=changes))
    return await waiting


def apply_lsp_edits(text: str, edits: list[types.TextEdit]) -> str:
    """What an editor does with a WorkspaceEdit: positions are 0-based lines and UTF-16 columns."""
    lines = text.splitlines(keepends=True)

    def offset(position: types.Position) -> int:
        if position.line >= len(lines):
            return len(text)
        line = lines[position.line]
        units = 0
        for index, char in enumerate(line):
            if units >= position.character:
                return sum(map(len, lines[:position.line])) + index
            units += len(char.encode("utf-16-le")) // 2
        return sum(map(len, lines[:position.line + 1]))

    spans = sorted(((offset(e.range.start), offset(e.range.end), e.new_text) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def as_range(start: tuple[int, int], end: tuple[int, int]) -> types.Range:
    return types.Range(start=types.Position(*start), end=types.Position(*end))


async def code_actions(client, uri: str, rng: types.Range, diagnostics: list[types.Diagnostic],
                       only: list[str] | None = None) -> list[types.CodeAction]:
    result = await client.text_document_code_action_async(types.CodeActionParams(
        text_document=types.TextDocumentIdentifier(uri=uri), range=rng,
        context=types.CodeActionContext(diagnostics=diagnostics, only=only)))
    return [a for a in result or [] if isinstance(a, types.CodeAction)]


@pytest.mark.asyncio(loop_scope="module")
async def test_opening_a_buggy_file_publishes_diagnostics_with_zero_based_utf16_ranges(client):
    uri, diagnostics = await open_document(client, "train.py", BUGGY)

    assert [(d.code, d.source, d.severity) for d in diagnostics] == [
        ("TL501", "tapelint", types.DiagnosticSeverity.Error)] * 2
    first, second = diagnostics
    # `lr=0.001` is line 2, columns 31-39 as 1-based lines: LSP counts lines from 0.
    assert first.range == as_range((1, 37), (1, 45))
    assert BUGGY.splitlines()[1][37:45] == "lr=0.001"
    # The emoji before `lr=` is one code point but two UTF-16 units, which is what LSP counts by default.
    assert second.range == as_range((2, 44), (2, 51))
    assert "`lr=`" in first.message

    # The code links to the rule's documentation, which a user can open.
    href = first.code_description.href
    assert href.startswith("file:")
    docs = Path(url2pathname(urlparse(href).path)).read_text(encoding="utf-8")
    assert "TL501" in docs and "## What it does" in docs


@pytest.mark.asyncio(loop_scope="module")
async def test_applying_the_quick_fix_makes_the_diagnostic_go_away(client):
    uri, diagnostics = await open_document(client, "train.py", BUGGY)
    target = diagnostics[0]

    actions = await code_actions(client, uri, target.range, [target])
    quick_fixes = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quick_fixes] == ["TL501: Rename `lr=` to `learning_rate=`"]
    fix = quick_fixes[0]
    assert fix.is_preferred and fix.diagnostics[0].range == target.range
    edits = fix.edit.changes[uri]
    fixed = apply_lsp_edits(BUGGY, edits)
    assert "Adam(learning_rate=0.001, beta_1=0.9)" in fixed

    # The editor applies the edit and reports it as an incremental change, the way VS Code does.
    remaining = await change_document(client, uri, 2, [
        types.TextDocumentContentChangePartial(range=e.range, text=e.new_text) for e in edits])
    assert [d.range.start.line for d in remaining] == [2], "only the untouched second finding is left"


@pytest.mark.asyncio(loop_scope="module")
async def test_unsafe_fixes_are_offered_but_titled_unsafe_and_not_preferred(client):
    text = "import tensorflow as tf\noptimizer = tf.keras.optimizers.Adam(learning_rate=0.01, decay=1e-4)\n"
    uri, diagnostics = await open_document(client, "train.py", text)
    assert [d.code for d in diagnostics] == ["TL501"]

    actions = await code_actions(client, uri, diagnostics[0].range, diagnostics)
    assert len(actions) == 1, "an unsafe fix is never part of `fix all safe`"
    action = actions[0]
    assert "unsafe" in action.title and "InverseTimeDecay" in action.title
    assert not action.is_preferred
    fixed = apply_lsp_edits(text, action.edit.changes[uri])
    assert "InverseTimeDecay(0.01, decay_steps=1, decay_rate=1e-4)" in fixed and "decay=1e-4" not in fixed


@pytest.mark.asyncio(loop_scope="module")
async def test_fix_all_safe_applies_every_safe_fix_and_leaves_unsafe_ones(client):
    text = (
        "import tensorflow as tf\n"
        "first = tf.keras.optimizers.Adam(lr=0.001, decay=0.0)\n"
        "\n"
        "second = tf.keras.optimizers.SGD(lr=0.1, decay=1e-4)\n"
    )
    uri, diagnostics = await open_document(client, "train.py", text)
    assert len(diagnostics) == 4

    actions = await code_actions(client, uri, as_range((0, 0), (0, 0)), [], only=["source.fixAll"])
    assert [(a.title, a.kind) for a in actions] == [("tapelint: fix all safe", "source.fixAll.tapelint")]
    fixed = apply_lsp_edits(text, actions[0].edit.changes[uri])
    assert fixed == (
        "import tensorflow as tf\n"
        "first = tf.keras.optimizers.Adam(learning_rate=0.001)\n"
        "\n"
        "second = tf.keras.optimizers.SGD(learning_rate=0.1, decay=1e-4)\n"
    )

    remaining = await change_document(client, uri, 2, [types.TextDocumentContentChangeWholeDocument(text=fixed)])
    assert [(d.code, d.range.start.line) for d in remaining] == [("TL501", 3)]
    assert "`decay=`" in remaining[0].message


@pytest.mark.asyncio(loop_scope="module")
async def test_fix_all_in_a_file_with_windows_line_endings_keeps_them(client):
    text = "import tensorflow as tf\r\n\r\nopt = tf.keras.optimizers.Adam(lr=0.001)\r\nx = 1\r\n"
    uri, diagnostics = await open_document(client, "train.py", text)
    assert [d.range for d in diagnostics] == [as_range((2, 31), (2, 39))]
    actions = await code_actions(client, uri, as_range((0, 0), (0, 0)), [], only=["source.fixAll.tapelint"])
    fixed = apply_lsp_edits(text, actions[0].edit.changes[uri])
    assert fixed == "import tensorflow as tf\r\n\r\nopt = tf.keras.optimizers.Adam(learning_rate=0.001)\r\nx = 1\r\n"


@pytest.mark.asyncio(loop_scope="module")
async def test_hover_on_a_noqa_comment_shows_the_rule_docs(client):
    text = "import tensorflow as tf\noptimizer = tf.keras.optimizers.Adam(lr=0.001)  # noqa: TL501\n"
    uri, diagnostics = await open_document(client, "train.py", text)
    assert diagnostics == [], "the noqa comment suppresses the finding in the editor too"

    column = text.splitlines()[1].index("TL501") + 2
    hover = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, column)))
    assert hover is not None
    assert "removed-optimizer-argument" in hover.contents.value
    assert "## Why is this bad?" in hover.contents.value
    assert hover.range == as_range((1, column - 2), (1, column + 3))

    on_code = await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=uri), position=types.Position(1, 5)))
    assert on_code is None


@pytest.mark.asyncio(loop_scope="module")
async def test_a_syntax_error_in_the_buffer_is_a_tl000_diagnostic_and_the_server_keeps_working(client):
    uri, diagnostics = await open_document(client, "train.py", "import tensorflow as tf\ndef step(:\n    pass\n")
    assert [d.code for d in diagnostics] == ["TL000"]
    assert diagnostics[0].severity == types.DiagnosticSeverity.Error
    assert diagnostics[0].range.start != diagnostics[0].range.end, "a visible range, not a point"

    # Typing on until the file parses again brings the real findings back.
    remaining = await change_document(client, uri, 2, [types.TextDocumentContentChangeWholeDocument(text=BUGGY)])
    assert [d.code for d in remaining] == ["TL501", "TL501"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_burst_of_edits_publishes_only_the_latest_text(client):
    uri, diagnostics = await open_document(client, "train.py", BUGGY)
    assert len(diagnostics) == 2
    waiting = asyncio.ensure_future(publish_for(client, uri))
    for version, text in enumerate([BUGGY + "x = 1\n", BUGGY + "x = 12\n", "import tensorflow as tf\n"], start=2):
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)]))
    assert await waiting == [], "the first diagnostics after the burst are for its last text"


@pytest.mark.asyncio(loop_scope="module")
async def test_the_workspace_pyproject_config_applies(client):
    (client.project / "pyproject.toml").write_text(
        '[tool.tapelint]\nselect = ["TL501"]\nignore = ["TL501"]\n', encoding="utf-8")
    _, diagnostics = await open_document(client, "train.py", BUGGY)
    assert diagnostics == []


@pytest.mark.asyncio(loop_scope="module")
async def test_a_broken_config_is_reported_and_the_defaults_are_used(client):
    (client.project / "pyproject.toml").write_text('[tool.tapelint]\nselect = "TL501"\n', encoding="utf-8")
    _, diagnostics = await open_document(client, "train.py", BUGGY)
    assert "TL501" in [d.code for d in diagnostics]
    errors = [m.message for m in client.messages if m.type == types.MessageType.Error]
    assert errors == [f"tapelint: {client.project / 'pyproject.toml'}: `select` must be a list of strings; "
                      "using the default settings"]


@pytest.mark.asyncio(loop_scope="module")
async def test_saving_re_lints_with_the_settings_as_they_are_now(client):
    uri, diagnostics = await open_document(client, "train.py", BUGGY)
    assert len(diagnostics) == 2
    (client.project / "pyproject.toml").write_text(
        '[tool.tapelint]\nselect = ["TL501"]\nignore = ["TL501"]\n', encoding="utf-8")
    waiting = asyncio.ensure_future(publish_for(client, uri))
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert await waiting == []


@pytest.mark.asyncio(loop_scope="module")
async def test_closing_a_document_clears_its_diagnostics(client):
    uri, diagnostics = await open_document(client, "train.py", BUGGY)
    assert diagnostics
    waiting = asyncio.ensure_future(publish_for(client, uri))
    client.text_document_did_close(types.DidCloseTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=uri)))
    assert await waiting == []


@pytest.mark.asyncio(loop_scope="module")
async def test_malformed_requests_do_not_kill_the_server(client, monkeypatch):
    with monkeypatch.context() as raw:
        # Let the client send untyped garbage, as a buggy editor plugin would.
        raw.setattr(client.protocol, "get_message_type", lambda method: None)
        # Params that are not a CodeActionParams at all get an error answer, not silence.
        with pytest.raises(JsonRpcException, match="cannot read the params"):
            await asyncio.wait_for(
                client.protocol.send_request_async(types.TEXT_DOCUMENT_CODE_ACTION, {"textDocument": 42}), TIMEOUT)
        client.protocol.notify(types.TEXT_DOCUMENT_DID_OPEN, {"garbage": True})
        client.protocol.notify(types.TEXT_DOCUMENT_DID_CHANGE, {"textDocument": {"uri": 7}, "contentChanges": 3})
    # Requests about documents the editor never opened are answered with nothing.
    unknown = "file:///nowhere/at/all.py"
    assert await code_actions(client, unknown, as_range((0, 0), (0, 1)), []) == []
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri=unknown), position=types.Position(3, 3))) is None
    assert await client.text_document_hover_async(types.HoverParams(
        text_document=types.TextDocumentIdentifier(uri="not a uri"), position=types.Position(0, 0))) is None
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=unknown, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text="x")]))

    # Still alive and still linting.
    _, diagnostics = await open_document(client, "train.py", BUGGY)
    assert [d.code for d in diagnostics] == ["TL501", "TL501"]


def test_importing_tapelint_does_not_import_pygls():
    code = "import sys, tapelint, tapelint.cli, tapelint.commands; print(sorted(m for m in ('pygls', 'lsprotocol') if m in sys.modules))"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert result.stdout.strip() == "[]"


def test_server_without_pygls_says_how_to_install_it():
    code = "import sys; sys.modules['pygls'] = None; sys.argv = ['tapelint', 'server']\nfrom tapelint.cli import main\nmain()"
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 2
    assert result.stderr.strip() == 'tapelint: error: the language server needs pygls: pip install "pygls>=2" (or install tapelint with its lsp extra)'


TRAINING = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(4, activation="softmax")])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(1e-3)
accuracy = tf.keras.metrics.SparseCategoricalAccuracy()


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    clipped, _ = tf.clip_by_global_norm(grads, 1.0)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    accuracy.update_state(y, model(x))
    return loss


for epoch in range(3):
    for x, y in [(tf.zeros((2, 3)), tf.zeros((2,)))]:
        train_step(x, y)
    print(float(accuracy.result()))
'''


def full_lint_as_published(text: str, path) -> list[tuple]:
    from tapelint.engine import lint_source

    return sorted((d.code, d.line - 1, d.column, d.end_line - 1, d.message) for d in lint_source(text, str(path)))


async def publish_for_version(client, uri: str, version: int) -> list[types.Diagnostic]:
    async def wait() -> list[types.Diagnostic]:
        while True:
            params = await client.wait_for_notification(types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS)
            if params.uri == uri and params.version == version:
                return list(params.diagnostics)
    return await asyncio.wait_for(wait(), TIMEOUT)


def offset_of(text: str, line: int, column: int) -> int:
    return sum(len(row) + 1 for row in text.split("\n")[:line]) + column


@pytest.mark.asyncio(loop_scope="module")
async def test_every_edit_of_a_series_publishes_what_a_full_lint_of_that_text_gives(client):
    # All rules: the findings cite lines and carry fixes, so carrying them over an edit is put to the test.
    (client.project / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    uri, _ = await open_document(client, "train.py", TRAINING)
    path = client.project / "train.py"
    text = TRAINING
    row = text.split("\n").index("    clipped, _ = tf.clip_by_global_norm(grads, 1.0)")
    end = len(text.split("\n")[row])
    edits = [(row, end + k, row, end + k, char) for k, char in enumerate("  # clip")]  # a trailing comment
    edits += [(row, end + 8, row, end + 8, "\n"), (row + 1, 0, row + 1, 0, "    ")]  # Enter, then indent
    edits += [(1, 0, 1, 0, "\n")]  # a blank line above every line a message cites
    edits += [(row + 5, 4, row + 5, 4, "#")]  # the apply_gradients line commented out: code changed
    edits += [(row + 5, 4, row + 5, 5, "")]  # and back
    for version, (line, column, end_line, end_column, new_text) in enumerate(edits, start=2):
        start, stop = offset_of(text, line, column), offset_of(text, end_line, end_column)
        text = text[:start] + new_text + text[stop:]
        waiting = asyncio.ensure_future(publish_for_version(client, uri, version))
        client.text_document_did_change(types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=uri, version=version),
            content_changes=[types.TextDocumentContentChangePartial(
                range=as_range((line, column), (end_line, end_column)), text=new_text)]))
        published = await waiting
        shown = sorted((d.code, d.range.start.line, d.range.start.character, d.range.end.line, d.message)
                       for d in published)
        assert shown == full_lint_as_published(text, path), f"version {version}"
    assert {d[0] for d in shown} >= {"TL101", "TL008"}


@pytest.mark.asyncio(loop_scope="module")
async def test_saving_a_module_re_lints_the_open_files_that_import_it(client):
    (client.project / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    models = ('import tensorflow as tf\n\n\ndef build():\n'
              '    return tf.keras.Sequential([tf.keras.layers.Dense(4, activation="softmax")])\n')
    train = ("import tensorflow as tf\nfrom models import build\n\nmodel = build()\n"
             "loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n"
             "optimizer = tf.keras.optimizers.Adam()\n\n\ndef train_step(x, y):\n"
             "    with tf.GradientTape() as tape:\n        loss = loss_fn(y, model(x, training=True))\n"
             "    grads = tape.gradient(loss, model.trainable_variables)\n"
             "    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n")
    models_uri, _ = await open_document(client, "models.py", models)
    train_uri, found = await open_document(client, "train.py", train)
    assert "TL101" in [d.code for d in found], "the softmax of models.py is seen from train.py"
    fixed = models.replace(', activation="softmax"', "")
    (client.project / "models.py").write_text(fixed, encoding="utf-8")
    client.text_document_did_change(types.DidChangeTextDocumentParams(
        text_document=types.VersionedTextDocumentIdentifier(uri=models_uri, version=2),
        content_changes=[types.TextDocumentContentChangeWholeDocument(text=fixed)]))
    waiting = asyncio.ensure_future(publish_for(client, train_uri))
    client.text_document_did_save(types.DidSaveTextDocumentParams(
        text_document=types.TextDocumentIdentifier(uri=models_uri)))
    assert "TL101" not in [d.code for d in await waiting]

"""Notebooks in the editor: `tapelint server` takes LSP 3.17 notebook documents, lints the notebook as the
command line lints the .ipynb, and publishes each finding on its cell's URI in cell coordinates."""

from __future__ import annotations

import asyncio
import json
import os
import sys

import pytest

pytest.importorskip("pygls", reason="the language server needs the `lsp` extra (pygls)")
pytest_lsp = pytest.importorskip("pytest_lsp", reason="the language-server tests need pytest-lsp")
pytest_asyncio = pytest.importorskip("pytest_asyncio")

from lsprotocol import types  # noqa: E402
from typer.testing import CliRunner  # noqa: E402

from tapelint.cli import app  # noqa: E402
from tests.test_lsp import apply_lsp_edits, code_actions  # noqa: E402

TIMEOUT = 20
# A bug that spans cells: the model (softmax output) in cell 1, the loss built for logits and the loop in
# cell 2; cell 3 has a safely fixable `lr=`. Magics and shell lines as people write them in notebooks.
MODEL = ('%pip install -q tensorflow\n'
         'import tensorflow as tf\n'
         '\n'
         'model = tf.keras.Sequential([\n'
         '    tf.keras.layers.Dense(64, activation="relu"),\n'
         '    tf.keras.layers.Dense(10, activation="softmax"),\n'
         '])\n')
LOOP = ('loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n'
        'for x, y in dataset:\n'
        '    with tf.GradientTape() as tape:\n'
        '        loss = loss_fn(y, model(x))\n'
        '    grads = tape.gradient(loss, model.trainable_variables)\n'
        '    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n')
OPTIMIZER = '!ls ./data\noptimizer = tf.keras.optimizers.Adam(lr=1e-3)'
CELLS = [MODEL, LOOP, OPTIMIZER]
METADATA = {"kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
            "language_info": {"name": "python"}}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def server(tmp_path_factory: pytest.TempPathFactory):
    workspace = tmp_path_factory.mktemp("workspace")
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path_factory.mktemp("cache"))}
    lsp_client = pytest_lsp.make_test_lsp_client()
    await lsp_client.start_io(sys.executable, "-m", "tapelint", "server", env=env, cwd=str(workspace))
    capabilities = pytest_lsp.client_capabilities("visual-studio-code")
    # VS Code 1.65 predates notebook documents; the VS Code of today declares them.
    capabilities.notebook_document = types.NotebookDocumentClientCapabilities(
        synchronization=types.NotebookDocumentSyncClientCapabilities(execution_summary_support=True))
    result = await lsp_client.initialize_session(types.InitializeParams(
        capabilities=capabilities, root_uri=workspace.as_uri(),
        workspace_folders=[types.WorkspaceFolder(uri=workspace.as_uri(), name="workspace")]))
    lsp_client.workspace = workspace  # type: ignore[attr-defined]
    lsp_client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    yield lsp_client
    await lsp_client.shutdown_session()
    await lsp_client.stop()


class Notebook:
    """A notebook as the editor holds it: its URI, its cells' URIs (`vscode-notebook-cell:` URIs, percent-
    encoded as VS Code sends them) and their texts, and the version it is at."""

    def __init__(self, client, name: str, cells: list[str]) -> None:
        self.client = client
        self.path = client.project / name
        self.uri = self.path.as_uri()
        self.cells = list(cells)
        self.cell_uris = [self.cell_uri(index) for index in range(len(cells))]
        self.version = 1
        self.next_index = len(cells)

    def cell_uri(self, index: int) -> str:
        return f"vscode-notebook-cell:{self.path.as_posix()}#W{index}sZmlsZQ%3D%3D"

    def save_as_ipynb(self) -> None:
        data = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                           "source": text.splitlines(keepends=True)} for text in self.cells],
                "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}
        self.path.write_text(json.dumps(data, indent=1), encoding="utf-8")

    def document(self, index: int) -> types.TextDocumentItem:
        return types.TextDocumentItem(uri=self.cell_uris[index], language_id="python", version=1,
                                      text=self.cells[index])

    def identifier(self) -> types.VersionedNotebookDocumentIdentifier:
        self.version += 1
        return types.VersionedNotebookDocumentIdentifier(version=self.version, uri=self.uri)


async def publishes(client, uris: list[str], send) -> dict[str, list[types.Diagnostic]]:
    """Send a message and wait until the server has published diagnostics for each of `uris` (the client
    keeps the last diagnostics published for each URI)."""
    for uri in uris:
        client.diagnostics.pop(uri, None)
    send()

    async def wait() -> dict[str, list[types.Diagnostic]]:
        while not all(uri in client.diagnostics for uri in uris):
            await asyncio.sleep(0.02)
        return {uri: list(client.diagnostics[uri]) for uri in uris}

    return await asyncio.wait_for(wait(), TIMEOUT)


async def open_notebook(client, name: str, cells: list[str]) -> tuple[Notebook, dict[str, list[types.Diagnostic]]]:
    notebook = Notebook(client, name, cells)
    notebook.save_as_ipynb()

    def send() -> None:
        client.notebook_document_did_open(types.DidOpenNotebookDocumentParams(
            notebook_document=types.NotebookDocument(
                uri=notebook.uri, notebook_type="jupyter-notebook", version=1, metadata=METADATA,
                cells=[types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri)
                       for uri in notebook.cell_uris]),
            cell_text_documents=[notebook.document(index) for index in range(len(cells))]))

    return notebook, await publishes(client, notebook.cell_uris, send)


def found(published: dict[str, list[types.Diagnostic]], notebook: Notebook) -> set[tuple[int, str, int, int]]:
    """(cell number, code, 0-based line, 0-based column) of every published finding."""
    return {(notebook.cell_uris.index(uri) + 1, d.code, d.range.start.line, d.range.start.character)
            for uri, diagnostics in published.items() for d in diagnostics}


@pytest.fixture
def client(server, request: pytest.FixtureRequest):
    project = server.workspace / request.node.name
    project.mkdir()
    # Two rules only, so that rules added later cannot change what these tests see.
    (project / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL101", "TL501"]\n', encoding="utf-8")
    server.project = project
    return server


@pytest.mark.asyncio(loop_scope="module")
async def test_the_server_offers_notebook_sync_for_jupyter_python_cells(client):
    sync = client.server_capabilities.notebook_document_sync
    assert sync is not None and sync.save
    selector = sync.notebook_selector[0]
    assert selector.notebook == "jupyter-notebook" and [c.language for c in selector.cells] == ["python"]


@pytest.mark.asyncio(loop_scope="module")
async def test_a_bug_across_cells_is_published_on_the_cell_uri_as_the_command_line_finds_it(client):
    notebook, published = await open_notebook(client, "train.ipynb", CELLS)

    model, loop, optimizer = (published[uri] for uri in notebook.cell_uris)
    assert model == [], "the model cell is where the softmax is, not where the finding is"
    assert [d.code for d in loop] == ["TL101"]
    # Cell-relative: line 0 of cell 2, at `from_logits=True`.
    start = loop[0].range.start
    assert (start.line, start.character) == (0, LOOP.index("from_logits=True"))
    assert [d.code for d in optimizer] == ["TL501"]
    assert optimizer[0].range.start.line == 1, "the `!ls` line of the cell counts as its first line"
    assert not any(d.code == "TL000" for ds in published.values() for d in ds), "magics are not syntax errors"

    # The command line gives the same findings for the same notebook saved as .ipynb.
    result = CliRunner().invoke(app, ["check", "--format", "json", str(notebook.path)])
    report = json.loads(result.stdout)
    cli = {(d["cell"], d["code"], d["line"] - 1, d["column"] - 1) for d in report["diagnostics"]}
    assert cli == found(published, notebook)
    assert {d["message"] for d in report["diagnostics"]} == {d.message for ds in published.values() for d in ds}
    # The softmax the JSON lists under `related` (cell 1) is linked to cell 1's own URI, at its own line.
    [softmax] = [r for d in report["diagnostics"] for r in d["related"]]
    [info] = loop[0].related_information
    assert info.location.uri == notebook.cell_uris[0]
    assert (softmax["cell"], info.location.range.start.line) == (1, softmax["line"] - 1)


@pytest.mark.asyncio(loop_scope="module")
async def test_editing_the_model_cell_clears_the_finding_in_the_loop_cell(client):
    notebook, published = await open_notebook(client, "train.ipynb", CELLS)
    assert [d.code for d in published[notebook.cell_uris[1]]] == ["TL101"]

    line = MODEL.splitlines()[5]
    start = line.index(', activation="softmax"')
    edit = types.TextDocumentContentChangePartial(
        range=types.Range(start=types.Position(5, start), end=types.Position(5, start + len(', activation="softmax"'))),
        text="")
    published = await publishes(client, notebook.cell_uris, lambda: client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=notebook.identifier(),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(text_content=[
                types.NotebookDocumentCellContentChanges(
                    document=types.VersionedTextDocumentIdentifier(uri=notebook.cell_uris[0], version=2),
                    changes=[edit])])))))
    assert published[notebook.cell_uris[1]] == [], "the loop cell is clean once the model outputs logits"
    assert [d.code for d in published[notebook.cell_uris[2]]] == ["TL501"]


@pytest.mark.asyncio(loop_scope="module")
async def test_cells_added_and_removed_get_their_findings_and_lose_them(client):
    notebook, published = await open_notebook(client, "train.ipynb", CELLS)
    added = notebook.cell_uri(7)
    text = "scheduler_optimizer = tf.keras.optimizers.SGD(lr=0.1)\n"

    # A new cell after the first one: it gets its own finding; the cells after it keep theirs.
    published = await publishes(client, [added, *notebook.cell_uris], lambda: client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=notebook.identifier(),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
                structure=types.NotebookDocumentCellChangeStructure(
                    array=types.NotebookCellArrayChange(start=1, delete_count=0, cells=[
                        types.NotebookCell(kind=types.NotebookCellKind.Code, document=added)]),
                    did_open=[types.TextDocumentItem(uri=added, language_id="python", version=1, text=text)]))))))
    assert [(d.code, d.range.start.line) for d in published[added]] == [("TL501", 0)]
    assert [d.code for d in published[notebook.cell_uris[1]]] == ["TL101"]

    # The last cell (now the fourth) goes: its finding is cleared.
    removed = notebook.cell_uris[2]
    published = await publishes(client, [removed], lambda: client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=notebook.identifier(),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
                structure=types.NotebookDocumentCellChangeStructure(
                    array=types.NotebookCellArrayChange(start=3, delete_count=1),
                    did_close=[types.TextDocumentIdentifier(uri=removed)]))))))
    assert published[removed] == []


@pytest.mark.asyncio(loop_scope="module")
async def test_moving_a_cell_relints_the_notebook_in_its_new_order(client):
    notebook, published = await open_notebook(client, "train.ipynb", CELLS)
    moved = notebook.cell_uris[2]

    # The optimizer cell goes to the top: a move is a delete and an insert of the same cell, text kept.
    published = await publishes(client, notebook.cell_uris, lambda: client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=notebook.identifier(),
            change=types.NotebookDocumentChangeEvent(cells=types.NotebookDocumentCellChanges(
                structure=types.NotebookDocumentCellChangeStructure(array=types.NotebookCellArrayChange(
                    start=0, delete_count=3, cells=[
                        types.NotebookCell(kind=types.NotebookCellKind.Code, document=uri)
                        for uri in (moved, *notebook.cell_uris[:2])])))))))
    assert [d.code for d in published[moved]] == ["TL501"]
    notebook.cells = [OPTIMIZER, MODEL, LOOP]
    notebook.cell_uris = [moved, *notebook.cell_uris[:2]]
    notebook.save_as_ipynb()
    report = json.loads(CliRunner().invoke(app, ["check", "--format", "json", str(notebook.path)]).stdout)
    assert {(d["cell"], d["code"], d["line"] - 1, d["column"] - 1) for d in report["diagnostics"]} == found(
        published, notebook), "the findings of the notebook in its new order, numbered by the new order"


@pytest.mark.asyncio(loop_scope="module")
async def test_saving_relints_and_metadata_naming_another_language_clears_the_findings(client):
    notebook, _ = await open_notebook(client, "train.ipynb", CELLS)
    published = await publishes(client, notebook.cell_uris, lambda: client.notebook_document_did_save(
        types.DidSaveNotebookDocumentParams(notebook_document=types.NotebookDocumentIdentifier(uri=notebook.uri))))
    assert [d.code for d in published[notebook.cell_uris[1]]] == ["TL101"]

    published = await publishes(client, notebook.cell_uris, lambda: client.notebook_document_did_change(
        types.DidChangeNotebookDocumentParams(
            notebook_document=notebook.identifier(),
            change=types.NotebookDocumentChangeEvent(metadata={"language_info": {"name": "R"}}))))
    assert all(diagnostics == [] for diagnostics in published.values()), "an R notebook is not linted"


@pytest.mark.asyncio(loop_scope="module")
async def test_quick_fix_and_fix_all_on_a_cell_uri_edit_that_cell(client):
    notebook, published = await open_notebook(client, "train.ipynb", CELLS)
    uri = notebook.cell_uris[2]
    target = published[uri][0]

    actions = await code_actions(client, uri, target.range, [target])
    quick = [a for a in actions if a.kind == types.CodeActionKind.QuickFix]
    assert [a.title for a in quick] == ["TL501: Rename `lr=` to `learning_rate=`"]
    assert list(quick[0].edit.changes) == [uri]
    assert apply_lsp_edits(OPTIMIZER, quick[0].edit.changes[uri]) == (
        "!ls ./data\noptimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)")

    # The loop cell's fix (from_logits) is unsafe: offered there, titled so, never in fix-all.
    loop_uri = notebook.cell_uris[1]
    loop_actions = await code_actions(client, loop_uri, published[loop_uri][0].range, published[loop_uri])
    assert [a.is_preferred for a in loop_actions] == [False] and "unsafe" in loop_actions[0].title
    assert list(loop_actions[0].edit.changes) == [loop_uri]

    fix_all = await code_actions(client, uri, target.range, [], only=["source.fixAll.tapelint"])
    assert [a.title for a in fix_all] == ["tapelint: fix all safe"]
    assert apply_lsp_edits(OPTIMIZER, fix_all[0].edit.changes[uri]).endswith("Adam(learning_rate=1e-3)")


@pytest.mark.asyncio(loop_scope="module")
async def test_closing_the_notebook_clears_the_findings_of_every_cell(client):
    notebook, _ = await open_notebook(client, "train.ipynb", CELLS)
    published = await publishes(client, notebook.cell_uris, lambda: client.notebook_document_did_close(
        types.DidCloseNotebookDocumentParams(
            notebook_document=types.NotebookDocumentIdentifier(uri=notebook.uri),
            cell_text_documents=[types.TextDocumentIdentifier(uri=uri) for uri in notebook.cell_uris])))
    assert all(diagnostics == [] for diagnostics in published.values())


@pytest.mark.asyncio(loop_scope="module")
async def test_a_notebook_sent_as_one_python_text_is_linted_and_its_json_is_not(client):
    # jupyterlab-lsp joins the code cells into `.virtual_documents/<notebook>.ipynb`, magics as calls.
    virtual = client.project / ".virtual_documents"
    virtual.mkdir()
    magic = 'get_ipython().run_line_magic("pip", " install -q tensorflow")'
    joined = MODEL.replace("%pip install -q tensorflow", magic)
    joined = '{"run": 1}\n' + joined + "\n\n" + LOOP  # a first cell that starts like JSON does
    uri = (virtual / "train.ipynb").as_uri()
    published = await publishes(client, [uri], lambda: client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=uri, language_id="python", version=1, text=joined))))
    assert [d.code for d in published[uri]] == ["TL101"]

    # The same notebook opened as its JSON text (a client that syncs every file) is not read as Python.
    notebook = Notebook(client, "as_json.ipynb", CELLS)
    notebook.save_as_ipynb()
    text = notebook.path.read_text(encoding="utf-8")
    client.diagnostics.pop(notebook.uri, None)
    client.text_document_did_open(types.DidOpenTextDocumentParams(
        text_document=types.TextDocumentItem(uri=notebook.uri, language_id="python", version=1, text=text)))
    await asyncio.sleep(1)
    assert notebook.uri not in client.diagnostics, "no TL000 syntax error on notebook JSON"

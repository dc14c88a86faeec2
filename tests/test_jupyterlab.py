"""Notebooks in a real JupyterLab: jupyterlab-lsp runs `tapelint server` for Python, headless Chromium opens a
notebook whose bug spans two cells, and the finding shows in the cell where it is, with its message.

Needs JupyterLab, jupyterlab-lsp and Playwright (the `test` extra) and Chromium (`apt-get install chromium`;
Playwright drives it, none of its own browsers is downloaded). `python -m tests.test_jupyterlab PNG` takes the
screenshot kept in docs/ again.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

CHROMIUM_NAMES = ("chromium", "chromium-browser", "google-chrome")
CHROMIUM_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update", "--disable-sync"]
TOKEN = "tapelint-test"
# The model (softmax output) in cell 1, the loss built for logits in cell 2, a shell line in cell 3.
CELLS = [
    '%pip install -q tensorflow\n'
    'import tensorflow as tf\n'
    '\n'
    'model = tf.keras.Sequential([\n'
    '    tf.keras.layers.Dense(64, activation="relu"),\n'
    '    tf.keras.layers.Dense(10, activation="softmax"),\n'
    '])',
    'loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)\n'
    'optimizer = tf.keras.optimizers.Adam(learning_rate=1e-3)\n'
    'for x, y in dataset:\n'
    '    with tf.GradientTape() as tape:\n'
    '        loss = loss_fn(y, model(x))\n'
    '    grads = tape.gradient(loss, model.trainable_variables)\n'
    '    optimizer.apply_gradients(zip(grads, model.trainable_variables))',
    '!ls ./data',
]
METADATA = {
    "kernelspec": {"display_name": "Python 3", "language": "python", "name": "python3"},
    "language_info": {"codemirror_mode": {"name": "ipython", "version": 3}, "file_extension": ".py",
                      "mimetype": "text/x-python", "name": "python", "nbconvert_exporter": "python",
                      "pygments_lexer": "ipython3", "version": "3.11"},
}
README = Path(__file__).resolve().parents[1] / "README.md"


def readme_config() -> dict:
    """The Jupyter config the README tells users to write: the JSON block that registers the server."""
    blocks = re.findall(r"```json\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL)
    found = [json.loads(block) for block in blocks if "LanguageServerManager" in block]
    assert len(found) == 1, "the README shows one jupyter-lsp config"
    return found[0]


def chromium() -> str | None:
    found = (shutil.which(name) for name in CHROMIUM_NAMES)
    return next((path for path in found if path), None)


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _write_setup(base: Path) -> tuple[Path, dict[str, str]]:
    """A project with the notebook, and the environment of a JupyterLab that knows nothing but it."""
    root = base / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL101"]\n', encoding="utf-8")
    notebook = {"cells": [{"cell_type": "code", "execution_count": None, "metadata": {}, "outputs": [],
                           "source": text.splitlines(keepends=True)} for text in CELLS],
                "metadata": METADATA, "nbformat": 4, "nbformat_minor": 5}
    (root / "train.ipynb").write_text(json.dumps(notebook, indent=1) + "\n", encoding="utf-8")
    config = base / "jupyter-config"
    config.mkdir()
    settings = readme_config()
    spec = settings["LanguageServerManager"]["language_servers"]["tapelint"]
    assert spec["argv"] == ["tapelint", "server"]
    spec["argv"] = [sys.executable, "-m", "tapelint", "server"]  # `tapelint` may not be on PATH under a test runner
    settings["LanguageServerManager"]["autodetect"] = False  # only tapelint, whatever else is installed
    (config / "jupyter_server_config.json").write_text(json.dumps(settings), encoding="utf-8")
    settings = base / "lab-settings" / "@jupyterlab" / "apputils-extension"
    settings.mkdir(parents=True)
    (settings / "notification.jupyterlab-settings").write_text('{"fetchNews": "false"}', encoding="utf-8")
    env = {**os.environ, "JUPYTER_CONFIG_DIR": str(config), "JUPYTER_DATA_DIR": str(base / "jupyter-data"),
           "JUPYTER_RUNTIME_DIR": str(base / "jupyter-runtime"), "JUPYTERLAB_SETTINGS_DIR": str(base / "lab-settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(base / "lab-workspaces"), "XDG_CACHE_HOME": str(base / "cache"),
           "JUPYTER_PLATFORM_DIRS": "1"}
    env.pop("JUPYTER_PATH", None)
    return root, env


def _wait_until_up(url: str, lab: subprocess.Popen, log: Path, seconds: float = 90) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if lab.poll() is not None:
            raise AssertionError(f"JupyterLab exited ({lab.returncode}):\n{log.read_text(errors='replace')[-3000:]}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except OSError:
            time.sleep(0.3)
    raise AssertionError(f"JupyterLab did not answer within {seconds} s:\n{log.read_text(errors='replace')[-3000:]}")


def notebook_diagnostic_in_jupyterlab(base: Path, screenshot: Path) -> dict[str, object]:
    """Open the notebook in JupyterLab in headless Chromium; wait for tapelint's finding to be drawn; hover
    it, take a screenshot. What the page shows: the marked text, the cell it is in, the tooltip's text."""
    from playwright.sync_api import sync_playwright

    root, env = _write_setup(base)
    port = _free_port()
    log = base / "jupyterlab.log"
    with open(log, "wb") as output:
        lab = subprocess.Popen(
            [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ServerApp.ip=127.0.0.1",
             f"--ServerApp.port={port}", "--ServerApp.port_retries=0", f"--IdentityProvider.token={TOKEN}",
             f"--ServerApp.root_dir={root}"],
            cwd=root, env=env, stdout=output, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        _wait_until_up(f"http://127.0.0.1:{port}/api/status?token={TOKEN}", lab, log)
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch_persistent_context(
                str(base / "chromium-profile"), executable_path=chromium(), headless=True, args=CHROMIUM_FLAGS,
                viewport={"width": 1180, "height": 620})
            try:
                page = browser.new_page()
                page.goto(f"http://127.0.0.1:{port}/lab/tree/train.ipynb?token={TOKEN}")
                mark = page.locator(".jp-Cell .cm-lintRange").first
                try:
                    mark.wait_for(timeout=120_000)
                except Exception as error:  # noqa: BLE001 - say what the server did
                    raise AssertionError(f"no diagnostic was drawn: {error}\n"
                                         f"{log.read_text(errors='replace')[-3000:]}") from None
                cells = page.locator(".jp-Notebook .jp-Cell")
                in_cell = [index for index in range(cells.count())
                           if cells.nth(index).locator(".cm-lintRange").count()]
                marked = mark.inner_text()
                page.mouse.click(5, 600)  # leave the first cell's editor, so no cursor sits in the shot
                mark.hover()
                tooltip = page.locator(".cm-tooltip-lint").first
                tooltip.wait_for(timeout=30_000)
                text = tooltip.inner_text()
                page.screenshot(path=str(screenshot))
            finally:
                browser.close()
    finally:
        try:
            os.killpg(lab.pid, signal.SIGTERM)  # JupyterLab, its kernel and the language server
            lab.wait(timeout=20)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(lab.pid, signal.SIGKILL)
            lab.wait()
    return {"marked": marked, "cells": in_cell, "tooltip": text}


def test_jupyterlab_shows_the_finding_in_the_cell_where_it_is(tmp_path: Path):
    if chromium() is None:
        pytest.skip("Chromium is not installed (apt-get install chromium); .ci/run installs it")
    for module in ("jupyterlab", "jupyter_lsp", "jupyterlab_lsp", "playwright"):
        pytest.importorskip(module, reason=f"{module} is not installed (the `test` extra installs it)")

    shown = notebook_diagnostic_in_jupyterlab(tmp_path, tmp_path / "notebook.png")

    assert shown["cells"] == [1], "only the loop cell (the second) is marked"
    assert shown["marked"] == "from_logits=True"
    tooltip = str(shown["tooltip"])
    assert "`SparseCategoricalCrossentropy` is built with `from_logits=True` but receives softmax" in tooltip
    assert tooltip.rstrip().endswith("tapelint"), "the tooltip names the tool that found it"
    assert (tmp_path / "notebook.png").read_bytes().startswith(b"\x89PNG")


if __name__ == "__main__":
    import tempfile

    with tempfile.TemporaryDirectory() as scratch:
        print(notebook_diagnostic_in_jupyterlab(Path(scratch), Path(sys.argv[1]).resolve()))

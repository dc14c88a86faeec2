"""`check --watch` (issue 29, item 7): lint, then lint again after each change, through the cache, until
Ctrl-C. The loop runs in-process here, a fixed number of passes, with a hook between them that edits files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint import watch
from tapelint.cli import app
from tapelint.commands import run_check
from tapelint.runner import LintResult

ROOT = Path(__file__).resolve().parent.parent

# TL101: a softmax output fed to a from_logits loss (said at line 5, the loss).
FINDING = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
    return loss
'''
CLEAN = FINDING.replace(', activation="softmax"', "")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL101"]\n')  # the cache goes here
    (tmp_path / "a.py").write_text(FINDING)
    (tmp_path / "b.py").write_text(CLEAN)
    return tmp_path


def _watch(project: Path, steps: list, **options) -> int:
    """Run `check --watch` on the project for len(steps) passes; after pass i, steps[i](result) runs."""
    control = watch.Control(interval=0.01, max_passes=len(steps))
    control.after_pass = lambda result: steps[control.passes - 1](result)
    arguments = dict(paths=[str(project)], select=[], ignore=[], extend_select=[], output_format="text",
                     stdin_filename=None, config_file=None, jobs=1, exit_zero=False, quiet=False,
                     text_format="concise", color="never", watch=True, watch_control=control)
    arguments.update(options)
    return run_check(**arguments)  # type: ignore[arg-type]


def _lines(result: LintResult) -> list[str]:
    return [f"{Path(d.path).name}:{d.line}" for d in result.diagnostics]


def test_watch_relints_changed_files_only_and_follows_new_and_deleted_files(project: Path, capsys):
    seen: list[tuple[list[str], int, int]] = []

    def record(result: LintResult) -> None:
        seen.append((_lines(result), result.files_checked, result.cached))

    def then(action):
        def step(result: LintResult) -> None:
            record(result)
            action()
        return step

    steps = [
        then(lambda: (project / "a.py").write_text("# a comment above\n" + FINDING)),  # the finding moves
        then(lambda: (project / "c.py").write_text(FINDING)),  # a new file
        then(lambda: (project / "a.py").unlink()),  # a file deleted
        record,
    ]
    assert _watch(project, steps) == 0
    assert seen[0] == (["a.py:5"], 2, 0)
    # a.py changed and is linted again: its finding moved a line down; b.py comes from the cache.
    assert seen[1] == (["a.py:6"], 2, 1)
    assert seen[2] == (["a.py:6", "c.py:5"], 3, 2)
    assert seen[3] == (["c.py:5"], 2, 2)
    out = capsys.readouterr().out
    assert "Starting linter in watch mode..." in out
    assert out.count("File change detected...") == 3
    assert "] Found 1 finding. Watching for file changes." in out and "] Found 2 findings." in out
    assert f"{project / 'a.py'}:6:" in out  # the changed file's finding is reported again, where it now is


def test_watch_without_a_change_does_not_lint_again(project: Path, monkeypatch):
    scans = []
    real_scan = watch.scan

    def scan(paths):
        scans.append(1)
        if len(scans) > 5:
            raise KeyboardInterrupt  # five polls found nothing to do: stop as Ctrl-C would
        return real_scan(paths)

    monkeypatch.setattr(watch, "scan", scan)
    passes = []
    assert _watch(project, [passes.append, passes.append]) == 130
    assert len(passes) == 1


def test_watch_reads_an_edited_config_again(project: Path):
    seen = []
    steps = [lambda result: (seen.append(_lines(result)),
                             (project / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL102"]\n')),
             lambda result: seen.append(_lines(result))]
    _watch(project, steps)
    assert seen == [["a.py:5"], []]


def test_ctrl_c_ends_the_watch_with_130(project: Path):
    def interrupt(result):
        raise KeyboardInterrupt

    assert _watch(project, [interrupt, interrupt]) == 130


@pytest.mark.parametrize("other, message", [
    (["--fix"], "--watch cannot be combined with --fix"),
    (["--diff"], "--watch cannot be combined with --diff"),
    (["-"], "cannot read standard input"),
])
def test_watch_with_fix_diff_or_stdin_is_a_usage_error(project: Path, other: list[str], message: str):
    result = CliRunner().invoke(app, ["check", "--watch", *other, str(project)])
    assert result.exit_code == 2
    assert message in result.output


def test_scan_sees_changes_of_size_mtime_and_inode(tmp_path: Path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "notes.txt").write_text("n\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "lib.py").write_text("y = 1\n")
    before = watch.scan([tmp_path])
    assert sorted(Path(p).name for p in before) == ["a.py"]
    (tmp_path / "notes.txt").write_text("changed\n")
    (tmp_path / ".venv" / "lib.py").write_text("y = 2\n")
    assert watch.changed(before, watch.scan([tmp_path])) == []
    replacement = tmp_path / "a.py.tmp"
    replacement.write_text("x = 2\n")  # same size; an editor's save by rename gives a new inode
    os.replace(replacement, tmp_path / "a.py")
    assert watch.changed(before, watch.scan([tmp_path])) == [str(tmp_path / "a.py")]


@pytest.mark.slow
def test_the_console_script_watches_and_ctrl_c_exits_130_without_a_traceback(project: Path):
    process = subprocess.Popen([sys.executable, "-m", "tapelint", "check", "--watch", "--daemon", "off", "a.py"],
                               cwd=project, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                               env={**os.environ, "PYTHONPATH": str(ROOT)})
    try:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not (project / ".tapelint_cache").exists():
            time.sleep(0.1)
        time.sleep(1.0)
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert "Traceback" not in err and "Watching for file changes." in out and "a.py:5:" in out


def test_watch_with_a_json_report_keeps_stdout_parseable(project: Path, capsys):
    import json

    reports = []

    def step(result):
        reports.append(capsys.readouterr())
        (project / "b.py").write_text(FINDING)

    _watch(project, [step, lambda result: reports.append(capsys.readouterr())], output_format="json",
           text_format=None)
    for captured, count in zip(reports, (1, 2)):
        assert len(json.loads(captured.out)["diagnostics"]) == count
        assert "Watching for file changes." in captured.err


def test_a_broken_config_while_watching_is_said_and_the_watch_goes_on(project: Path, capsys):
    seen = []
    steps = [lambda result: (project / "pyproject.toml").write_text("[tool.tapelint\n"),
             lambda result: (seen.append(result), (project / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL101"]\n')),
             lambda result: seen.append(_lines(result))]
    assert _watch(project, steps) == 0
    assert seen == [None, ["a.py:5"]]
    captured = capsys.readouterr()
    assert "tapelint: error:" in captured.err and "invalid TOML" in captured.err
    assert "Traceback" not in captured.err

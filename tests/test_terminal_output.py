"""What a person at a terminal sees: `--output-format full` (source line, caret under the span, the fix),
colour and when it is off, and the progress line; and that pipes and files still get the concise report."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
import unicodedata
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint import Config, lint_source
from tapelint.cli import app
from tapelint.diagnostic import Diagnostic, Fix, Severity, TextEdit
from tapelint.reporters.progress import ProgressLine, progress_line
from tapelint.reporters.terminal import SourceFiles, wants_color
from tapelint.reporters.text import render_text
from tapelint.runner import lint_paths

ROOT = Path(__file__).resolve().parent.parent
ANSI = re.compile(r"\x1b\[[0-9;]*m")

TRAIN = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.SGD(
    learning_rate=0.01,
    momentum=0.9,
)


def make_schedule():
\tnote = "学習率"; opt = tf.keras.optimizers.Adam(lr=1e-3)
\treturn opt


def train_step(x, y):
    with tf.GradientTape() as tape:
        logits = model(x, training=True)
        loss = loss_fn(y, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    return loss
'''


def _width(text: str) -> int:
    """Columns a terminal gives `text` (no tabs in it): wide and fullwidth characters take two."""
    return sum(2 if unicodedata.east_asian_width(c) in ("W", "F") else 1 for c in text)


def _entries(report: str) -> dict[str, list[str]]:
    """Code -> the lines of its entry in a full report (header first)."""
    entries: dict[str, list[str]] = {}
    for block in report.split("\n\n"):
        lines = block.splitlines()
        match = re.match(r".*?:\d+:\d+: (TL\d+) ", lines[0]) if lines else None
        if match:
            entries[match.group(1)] = lines
    return entries


def _caret_columns(entry: list[str]) -> tuple[str, int, int]:
    """(source line as shown, display column where the carets start, number of carets), both lines
    measured after their `NN |` gutters."""
    source_row = next(line for line in entry if re.match(r"\d+ \|", line))
    caret_row = next(line for line in entry if "^" in line)
    gutter = source_row.index("|") + 2
    shown = source_row[gutter:]
    marks = caret_row[gutter:]
    start = len(marks) - len(marks.lstrip(" "))
    return shown, start, len(marks.strip().split(" ")[0])


@pytest.fixture
def train_file(tmp_path: Path) -> Path:
    # preview: the findings shown include TL001, which may be a preview rule (tapelint.maturity)
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\npreview = true\n", encoding="utf-8")
    path = tmp_path / "train.py"
    path.write_text(TRAIN, encoding="utf-8")
    return path


def _full(path: Path, **options: object) -> str:
    found = lint_source(path.read_text(encoding="utf-8"), str(path), Config(preview=True))
    return render_text(found, 1, text_format="full", sources=SourceFiles(), **options)


def test_full_format_puts_the_caret_under_the_span_after_a_tab_and_a_wide_character(train_file):
    entry = _entries(_full(train_file))["TL501"]
    assert entry[0].startswith(f"{train_file}:12:47: TL501 `lr=` on `Adam`")
    shown, start, carets = _caret_columns(entry)
    assert "\t" not in shown, "tabs are expanded so the gutter cannot shift them to another tab stop"
    assert shown.startswith("    note = \"学習率\"")
    # The carets start where `lr=1e-3` starts on screen: the three wide characters take six columns.
    assert start == _width(shown[: shown.index("lr=1e-3")])
    assert start == len(shown[: shown.index("lr=1e-3")]) + 3
    assert carets == len("lr=1e-3")
    assert any(line.strip() == "= help: Rename `lr=` to `learning_rate=` (safe fix: --fix)" for line in entry)


def test_full_format_marks_a_multi_line_span_to_the_end_of_its_first_line_and_counts_the_rest(train_file):
    entry = _entries(_full(train_file))["TL001"]
    assert entry[0].startswith(f"{train_file}:5:13: TL001 ")
    shown, start, carets = _caret_columns(entry)
    assert shown == "optimizer = tf.keras.optimizers.SGD("
    assert start == len("optimizer = ")
    assert carets == len("tf.keras.optimizers.SGD(")
    assert next(line for line in entry if "^" in line).endswith("^ and 3 more lines")
    assert not any("help:" in line for line in entry), "TL001 has no fix, so no help line"


def _diagnostic(line: int, column: int, end_line: int, end_column: int, fix: Fix | None = None) -> Diagnostic:
    return Diagnostic("m.py", line, column, end_line, end_column, "TL001", "optimizer-never-applied",
                      "message", Severity.ERROR, fix=fix)


def test_a_span_ending_at_the_start_of_a_line_does_not_count_that_line_and_an_empty_span_gets_one_caret():
    lines = ["x = f(", "    1,", ")", "y = 2"]
    report = render_text([_diagnostic(1, 4, 3, 0), _diagnostic(4, 5, 4, 5)], 1, text_format="full",
                         sources=lambda path, cell: lines, quiet=True)
    rows = [line for line in report.splitlines() if "^" in line]
    assert rows[0].endswith("    ^^ and 1 more line")
    assert rows[1] == "  |      ^"
    unsafe = Fix("Do it", (TextEdit(1, 0, 1, 1, ""),), safe=False)
    report = render_text([_diagnostic(1, 0, 1, 1, unsafe)], 1, text_format="full", sources=lambda p, c: lines)
    assert "= help: Do it (unsafe fix: --fix --unsafe-fixes)" in report
    assert report.endswith("\n\nFound 1 finding (1 error) in 1 of 1 file. 1 fixable (0 with --fix, "
                           "1 more with --unsafe-fixes).\n")


def test_full_format_without_the_source_shows_the_finding_line_alone():
    report = render_text([_diagnostic(9, 0, 9, 1)], 1, text_format="full", sources=lambda path, cell: ["x = 1"])
    assert report.splitlines()[0] == "m.py:9:1: TL001 message [optimizer-never-applied]"
    assert "|" not in report


def test_full_format_shows_a_notebook_finding_in_its_cell(tmp_path):
    notebook = tmp_path / "nb.ipynb"
    notebook.write_text(json.dumps({"nbformat": 4, "nbformat_minor": 5, "metadata": {}, "cells": [
        {"cell_type": "markdown", "metadata": {}, "source": ["# Training\n"]},
        {"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
         "source": ["import tensorflow as tf\n", "opt = tf.keras.optimizers.Adam(lr=0.1)\n"]},
    ]}), encoding="utf-8")
    result = CliRunner().invoke(app, ["check", "--no-cache", "--output-format", "full", "--select", "TL501",
                                      str(notebook)])
    entry = _entries(result.output)["TL501"]
    assert entry[0].startswith(f"{notebook}:cell 2:2:32: TL501 ")
    shown, start, carets = _caret_columns(entry)
    assert shown == "opt = tf.keras.optimizers.Adam(lr=0.1)"
    assert (start, carets) == (shown.index("lr="), len("lr=0.1"))


def test_full_format_shows_standard_input_from_what_was_read_not_from_the_file_on_disk(tmp_path, train_file):
    # An editor may pipe an unsaved buffer under the name of a file whose saved text differs.
    train_file.write_text("print('saved')\n", encoding="utf-8")
    result = CliRunner().invoke(app, ["check", "--no-cache", "--output-format", "full", "--select", "TL501",
                                      "--stdin-filename", str(train_file), "-"], input=TRAIN)
    shown, _, _ = _caret_columns(_entries(result.output)["TL501"])
    assert "Adam(lr=1e-3)" in shown


# Colour


class _Stream(io.StringIO):
    def __init__(self, tty: bool) -> None:
        super().__init__()
        self.tty = tty

    def isatty(self) -> bool:
        return self.tty


@pytest.mark.parametrize(("choice", "tty", "env", "output_file", "expected"), [
    ("auto", True, {}, None, True),
    ("auto", False, {}, None, False),
    ("auto", True, {"NO_COLOR": ""}, None, False),  # any value, even empty
    ("auto", True, {"NO_COLOR": "1", "FORCE_COLOR": "1"}, None, False),
    ("auto", False, {"FORCE_COLOR": "1"}, None, True),
    ("auto", False, {"FORCE_COLOR": "0"}, None, False),
    ("always", False, {"NO_COLOR": "1"}, None, True),
    ("never", True, {"FORCE_COLOR": "1"}, None, False),
    ("always", True, {}, "report.txt", False),
    ("auto", False, {"FORCE_COLOR": "1"}, "report.txt", False),
])
def test_colour_follows_the_flag_then_no_color_then_force_color_then_the_terminal(choice, tty, env, output_file,
                                                                                   expected):
    assert wants_color(choice, _Stream(tty), output_file, env) is expected


def test_colour_marks_the_path_bold_and_the_code_and_caret_in_the_severity_colour(train_file):
    report = _full(train_file, color=True)
    assert f"\x1b[1m{train_file}\x1b[0m:12:47: \x1b[1;31mTL501\x1b[0m" in report  # an error: red
    plain = ANSI.sub("", report)
    assert plain == _full(train_file)
    error = next(line for line in report.splitlines() if ":5:13:" in line)
    assert "\x1b[1;31mTL001\x1b[0m" in error
    assert "\x1b[1;31m^^^^" in report


def test_force_color_colours_a_piped_run_and_no_color_wins_over_it(train_file):
    runner = CliRunner()
    forced = runner.invoke(app, ["check", "--no-cache", str(train_file)], env={"FORCE_COLOR": "1", "NO_COLOR": None})
    assert "\x1b[1;31mTL001\x1b[0m" in forced.output
    assert ANSI.sub("", forced.output) == runner.invoke(app, ["check", "--no-cache", str(train_file)],
                                                        env={"FORCE_COLOR": None, "NO_COLOR": None}).output
    both = runner.invoke(app, ["check", "--no-cache", str(train_file)], env={"FORCE_COLOR": "1", "NO_COLOR": "1"})
    assert "\x1b[" not in both.output
    never = runner.invoke(app, ["check", "--no-cache", "--color", "never", str(train_file)], env={"FORCE_COLOR": "1"})
    assert "\x1b[" not in never.output


def test_a_report_file_is_never_coloured(tmp_path, train_file):
    out = tmp_path / "report.txt"
    result = CliRunner().invoke(app, ["check", "--no-cache", "--color", "always", "-o", str(out), str(train_file)])
    assert result.exit_code == 1
    assert "\x1b[" not in out.read_text(encoding="utf-8")
    assert out.read_text(encoding="utf-8").startswith(f"{train_file}:5:13: TL001 ")


# Pipes and files keep the concise report


def test_a_piped_run_prints_one_line_per_finding_as_before(train_file):
    runner = CliRunner()
    result = runner.invoke(app, ["check", "--no-cache", str(train_file)], env={"FORCE_COLOR": None})
    data = json.loads(runner.invoke(app, ["check", "--no-cache", "--format", "json", str(train_file)]).output)
    def cause(d: dict) -> str:  # where the cause lies, as the finding's line names it (test_related_locations)
        return " (" + "; ".join(f"{r['message']} at line {r['line']}" for r in d["related"]) + ")" if d["related"] else ""

    expected = [f"{d['path']}:{d['line']}:{d['column']}: {d['code']} {d['message']}{cause(d)} [{d['name']}]"
                for d in data["diagnostics"]]
    assert result.output.splitlines() == [*expected, "", result.output.splitlines()[-1]]
    assert result.output.splitlines()[-1].startswith("Found 2 findings (2 errors) in 1 of 1 file.")
    concise = runner.invoke(app, ["check", "--no-cache", "--output-format", "concise", str(train_file)])
    assert concise.output == result.output


def test_output_format_with_a_machine_format_is_a_usage_error(train_file):
    result = CliRunner().invoke(app, ["check", "--format", "json", "--output-format", "full", str(train_file)])
    assert result.exit_code == 2
    assert "--output-format" in result.output and "--format json" in result.output


# Progress


def _project(folder: Path, count: int) -> list[Path]:
    folder.mkdir()
    for index in range(count):
        # Half mention TensorFlow and are parsed; the other half are answered by the cheap text test.
        text = TRAIN if index % 2 else f"x = {index}\n"
        (folder / f"f{index:02}.py").write_text(text, encoding="utf-8")
    return [folder]


def test_progress_counts_every_file_once_in_order(tmp_path):
    calls: list[tuple[int, int]] = []
    lint_paths(_project(tmp_path / "p", 6), Config(), jobs=1, progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 6), (0, 6), (1, 6), (2, 6), (3, 6), (4, 6), (5, 6), (6, 6)]


def test_progress_counts_cache_hits_as_done_at_once(tmp_path):
    from tapelint.cache import Cache

    paths = _project(tmp_path / "p", 5)
    for file in paths[0].glob("*.py"):  # only files the engine parses are cached (tapelint.cache.worth_caching)
        file.write_text("import tensorflow as tf\n" + file.read_text(encoding="utf-8"), encoding="utf-8")
    config = Config(cache_dir=str(tmp_path / "cache"))
    lint_paths(paths, config, jobs=1, cache=Cache.for_config(config))
    (paths[0] / "f01.py").write_text(TRAIN + "\n", encoding="utf-8")  # one file changed
    calls: list[tuple[int, int]] = []
    lint_paths(paths, config, jobs=1, cache=Cache.for_config(config),
               progress=lambda done, total: calls.append((done, total)))
    assert calls == [(0, 5), (4, 5), (5, 5)]


def test_progress_of_a_pooled_run_reaches_the_total_and_keeps_the_output_order(tmp_path):
    paths = _project(tmp_path / "p", 20)
    calls: list[tuple[int, int]] = []
    pooled = lint_paths(paths, Config(), jobs=2, progress=lambda done, total: calls.append((done, total)))
    serial = lint_paths(paths, Config(), jobs=1)
    assert pooled.diagnostics == serial.diagnostics
    assert calls[-1] == (20, 20) and all(total == 20 for _, total in calls)
    assert [done for done, _ in calls] == sorted(done for done, _ in calls)
    assert len(calls) > 3, "pooled work reports per finished chunk, not once at the end"


def test_progress_line_draws_in_place_after_its_delay_and_wipes_itself():
    stream = _Stream(True)
    line = ProgressLine(stream, delay=0, interval=0)
    line(3, 10)
    line(10, 10)
    line.close()
    assert stream.getvalue() == ("\rtapelint: 3/10 files\r" "\rtapelint: 10/10 files\r" "\r" + " " * 21 + "\r")
    quick = _Stream(True)
    with ProgressLine(quick, delay=60) as early:
        early(10, 10)
    assert quick.getvalue() == "", "a run shorter than the delay shows nothing"


def test_progress_line_only_on_a_terminal_and_not_when_quiet():
    assert progress_line(_Stream(False), quiet=False) is None
    assert progress_line(_Stream(True), quiet=True) is None
    shown = progress_line(_Stream(True), quiet=False)
    assert shown is not None
    shown.close()


# A real terminal


@pytest.mark.slow
def test_on_a_terminal_the_default_is_full_and_coloured(train_file):
    pty = pytest.importorskip("pty")

    def run(env: dict[str, str]) -> str:
        leader, follower = pty.openpty()
        process = subprocess.Popen([sys.executable, "-m", "tapelint", "check", "--no-cache", str(train_file)],
                                   stdout=follower, stderr=follower, stdin=subprocess.DEVNULL, cwd=ROOT,
                                   env={**env, "PYTHONPATH": str(ROOT)})
        os.close(follower)
        chunks = []
        while True:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # EIO: the child closed the terminal
                break
            if not chunk:
                break
            chunks.append(chunk)
        os.close(leader)
        assert process.wait(timeout=120) == 1
        return b"".join(chunks).decode("utf-8").replace("\r\n", "\n")

    def report(screen: str) -> str:
        # A run over a second draws a progress line on stderr first (the same terminal here); it must
        # be wiped before the report: `\r`, spaces, `\r`. The report itself has no `\r`.
        progress, _, text = screen.rpartition("\r")
        if progress:
            assert re.fullmatch(r"(\rtapelint: \d+/1 files *\r)+\r *", progress), progress
        return text

    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR")}
    coloured = report(run(env))
    assert coloured.startswith(f"\x1b[1m{train_file}\x1b[0m:5:13: \x1b[1;31mTL001\x1b[0m ")
    plain = report(run({**env, "NO_COLOR": "1"}))
    assert "\x1b[" not in plain
    assert "\n12 |     note = \"学習率\"; opt = tf.keras.optimizers.Adam(lr=1e-3)\n" in plain
    assert "\n5 | optimizer = tf.keras.optimizers.SGD(\n" in plain
    assert ANSI.sub("", coloured) == plain

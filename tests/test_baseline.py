"""Adopting tapelint in a repository that has findings today, as a user meets it: `tapelint baseline` and
`check --baseline` (only new findings), `check --add-noqa`, and a bare `tapelint` checking the current folder."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tapelint import cli, launch

TRAIN = """\
import tensorflow as tf

metric = tf.keras.metrics.Mean()


def build_optimizer():
    return tf.keras.optimizers.Adam(lr=0.001)


def evaluate(batches):
    for batch in batches:
        metric.update_state(batch)
    metric.reset_states()
"""

NEW_BUG = """

def validate():
    metric.reset_states()
"""


def _tapelint(argv: list[str], capsys, monkeypatch, quick: bool = False) -> tuple[int, str, str]:
    """Run the console script in this process (the typer CLI, or the quick path of tapelint.launch)."""
    monkeypatch.setenv("TAPELINT_NO_DAEMON", "1")
    monkeypatch.setattr(sys, "argv", ["tapelint", *argv])
    with pytest.raises(SystemExit) as done:
        (launch.main if quick else cli.main)()
    out, err = capsys.readouterr()
    return int(done.value.code or 0), out, err


@pytest.fixture
def repo(tmp_path: Path, monkeypatch) -> Path:
    """A git repository with findings in two files, the current folder of the test."""
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "pyproject.toml").write_text("[tool.tapelint]\n", encoding="utf-8")
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "train.py").write_text(TRAIN, encoding="utf-8")
    (tmp_path / "other.py").write_text("import tensorflow as tf\n\nopt = tf.keras.optimizers.SGD(lr=0.1)\n",
                                       encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _codes(out: str) -> list[str]:
    return [line.split(": ")[1].split()[0] for line in out.splitlines() if ": TL" in line]


def test_a_baselined_repository_reports_only_the_bug_added_after_code_moved(repo, capsys, monkeypatch):
    code, out, _ = _tapelint(["check"], capsys, monkeypatch)
    assert code == 1 and sorted(_codes(out)) == ["TL501", "TL501", "TL502"]
    code, _, err = _tapelint(["baseline"], capsys, monkeypatch)
    assert code == 0 and "Recorded 3 findings in 2 files" in err
    recorded = json.loads((repo / ".tapelint-baseline.json").read_text(encoding="utf-8"))
    assert recorded["version"] == 1 and {f["path"] for f in recorded["findings"]} == {"src/train.py", "other.py"}
    assert not any("line" in f for f in recorded["findings"])

    # Move everything: lines inserted above, the two functions swapped, an unrelated edit; then a new bug.
    head, optimizer, evaluate = TRAIN.partition("def build_optimizer")[0], \
        "def build_optimizer" + TRAIN.split("def build_optimizer")[1].split("def evaluate")[0], \
        "def evaluate" + TRAIN.split("def evaluate")[1]
    moved = "# a header\n\nSTEPS = 10\n\n" + head + evaluate + "\n\n" + optimizer.rstrip() + "\n"
    (repo / "src" / "train.py").write_text(moved.replace("batches:", "batches:  # loop"), encoding="utf-8")
    code, out, err = _tapelint(["check", "--baseline", ".tapelint-baseline.json"], capsys, monkeypatch)
    assert code == 0 and _codes(out) == [], out
    assert "3 known findings not shown" in out
    code, out, _ = _tapelint(["check", "-q", "--baseline", ".tapelint-baseline.json"], capsys, monkeypatch)
    assert code == 0 and out == ""

    (repo / "src" / "train.py").write_text(moved + NEW_BUG, encoding="utf-8")
    for quick in (False, True):
        code, out, _ = _tapelint(["--baseline", ".tapelint-baseline.json"], capsys, monkeypatch, quick=quick)
        assert code == 1 and _codes(out) == ["TL502"], out
        assert "validate" not in out and f":{len((moved + NEW_BUG).splitlines())}:" in out.splitlines()[0]


def test_a_second_identical_finding_in_the_same_function_is_new(repo, capsys, monkeypatch):
    _tapelint(["baseline", "-q"], capsys, monkeypatch)
    (repo / "src" / "train.py").write_text(TRAIN + "    metric.reset_states()\n", encoding="utf-8")
    code, out, _ = _tapelint(["--baseline", ".tapelint-baseline.json"], capsys, monkeypatch)
    assert code == 1 and _codes(out) == ["TL502"]


def test_stale_entries_are_counted_and_listed(repo, capsys, monkeypatch):
    _tapelint(["baseline", "-q", "-o", "base.json"], capsys, monkeypatch)
    (repo / "other.py").write_text("import tensorflow as tf\n\nopt = tf.keras.optimizers.SGD(learning_rate=0.1)\n",
                                   encoding="utf-8")
    code, out, _ = _tapelint(["--baseline", "base.json"], capsys, monkeypatch)
    assert code == 0 and "2 known findings not shown; 1 entry no longer found (--show-baseline-stale" in out
    code, out, _ = _tapelint(["--baseline", "base.json", "--show-baseline-stale"], capsys, monkeypatch)
    assert "other.py: TL501 [removed-optimizer-argument] no longer found: `lr=0.1`" in out
    # A run over one file does not call the other file's entries stale.
    code, out, _ = _tapelint(["--baseline", "base.json", "src"], capsys, monkeypatch)
    assert "no longer found" not in out and "2 known findings" in out


def test_the_config_names_the_baseline_relative_to_itself(repo, capsys, monkeypatch):
    (repo / "pyproject.toml").write_text('[tool.tapelint]\nbaseline = "ci/baseline.json"\n', encoding="utf-8")
    code, _, err = _tapelint(["baseline"], capsys, monkeypatch)
    assert code == 0 and (repo / "ci" / "baseline.json").is_file()
    recorded = json.loads((repo / "ci" / "baseline.json").read_text(encoding="utf-8"))
    assert recorded["root"] == ".." and "src/train.py" in {f["path"] for f in recorded["findings"]}
    monkeypatch.chdir(repo / "src")
    code, out, _ = _tapelint(["."], capsys, monkeypatch)
    assert code == 0 and _codes(out) == [] and "known findings not shown" in out


def test_the_baseline_file_is_stable(repo, capsys, monkeypatch):
    _tapelint(["baseline"], capsys, monkeypatch)
    first = (repo / ".tapelint-baseline.json").read_bytes()
    (repo / "src" / "train.py").write_text("\n\n" + TRAIN, encoding="utf-8")
    _tapelint(["baseline", "--no-cache", "other.py", "src"], capsys, monkeypatch)
    assert (repo / ".tapelint-baseline.json").read_bytes() == first
    paths = [(f["path"], f["code"]) for f in json.loads(first)["findings"]]
    assert paths == sorted(paths)


@pytest.mark.parametrize("content, message", [
    (None, "no such file"),
    ("{not json", "not valid JSON (line 1)"),
    ('{"tool": "tapelint", "version": 99, "findings": []}', "version 99 is not one this tapelint reads"),
    ('{"tool": "tapelint", "version": 1, "findings": [{"path": 3}]}', "entry 1 is malformed"),
    ("[]", "not a tapelint baseline"),
])
def test_a_missing_or_broken_baseline_is_a_one_line_error(repo, capsys, monkeypatch, content, message):
    if content is not None:
        (repo / "base.json").write_text(content, encoding="utf-8")
    for quick in (False, True):
        code, out, err = _tapelint(["--baseline", "base.json"], capsys, monkeypatch, quick=quick)
        assert code == 2 and out == "" and message in err and len(err.strip().splitlines()) == 1, err
        assert "Traceback" not in err


def test_show_baseline_stale_without_a_baseline_is_a_usage_error(repo, capsys, monkeypatch):
    code, _, err = _tapelint(["--show-baseline-stale"], capsys, monkeypatch)
    assert code == 2 and "needs a baseline" in err


def test_notebook_findings_are_baselined_by_cell(repo, capsys, monkeypatch):
    def notebook(cells: list[str]) -> str:
        return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                      "source": c} for c in cells], "metadata": {}, "nbformat": 4,
                           "nbformat_minor": 5})

    opt = "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.001)\n"
    (repo / "nb.ipynb").write_text(notebook([opt]), encoding="utf-8")
    _tapelint(["baseline", "-q", "nb.ipynb"], capsys, monkeypatch)
    assert json.loads((repo / ".tapelint-baseline.json").read_text())["findings"][0]["cell"] == 1
    (repo / "nb.ipynb").write_text(notebook(["# setup\n\n" + opt]), encoding="utf-8")
    code, out, _ = _tapelint(["--baseline", ".tapelint-baseline.json", "nb.ipynb"], capsys, monkeypatch)
    assert code == 0 and _codes(out) == []
    (repo / "nb.ipynb").write_text(notebook([opt, opt]), encoding="utf-8")
    code, out, _ = _tapelint(["--baseline", ".tapelint-baseline.json", "nb.ipynb"], capsys, monkeypatch)
    assert code == 1 and "nb.ipynb:cell 2:" in out


# --- --add-noqa ---------------------------------------------------------------------------------------------

NOQA_CASES = """\
import tensorflow as tf

a = tf.keras.optimizers.Adam(lr=0.001)  # the paper's value
b = tf.keras.optimizers.Adam(lr=0.01, decay=0.1)  # noqa: E501
c = tf.keras.optimizers.Adam(
    lr=0.1)
d = tf.keras.optimizers.Adam(lr=\"\"\"
0.1\"\"\")
"""


def test_add_noqa_suppresses_every_finding_once_and_keeps_comments(repo, capsys, monkeypatch):
    path = repo / "noqa.py"
    path.write_text(NOQA_CASES, encoding="utf-8")
    code, out, _ = _tapelint(["noqa.py"], capsys, monkeypatch)
    found = len(_codes(out))
    assert code == 1 and found == 5
    code, _, err = _tapelint(["noqa.py", "--add-noqa"], capsys, monkeypatch)
    assert code == 0 and "Added " in err and " noqa directive" in err
    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[2] == "a = tf.keras.optimizers.Adam(lr=0.001)  # the paper's value  # noqa: TL501"
    assert lines[3] == "b = tf.keras.optimizers.Adam(lr=0.01, decay=0.1)  # noqa: E501, TL501"
    assert lines[4] == "c = tf.keras.optimizers.Adam(" and lines[5] == "    lr=0.1)  # noqa: TL501"
    # A comment on the first line would be inside the string: it goes on the last line of the finding.
    assert lines[6] == 'd = tf.keras.optimizers.Adam(lr="""' and lines[7] == '0.1""")  # noqa: TL501'
    compile(text, "noqa.py", "exec")
    code, out, _ = _tapelint(["noqa.py"], capsys, monkeypatch)
    assert code == 0 and _codes(out) == []
    code, _, err = _tapelint(["noqa.py", "--add-noqa"], capsys, monkeypatch, quick=True)
    assert code == 0 and "Added 0 noqa directives." in err and path.read_text(encoding="utf-8") == text


def test_add_noqa_in_a_repository_leaves_nothing_to_report(repo, capsys, monkeypatch):
    code, _, err = _tapelint(["--add-noqa"], capsys, monkeypatch)
    assert code == 0 and "Added 3 noqa directives in 2 files." in err
    code, out, _ = _tapelint([], capsys, monkeypatch)
    assert code == 0 and "All checks passed" in out
    assert "metric.reset_states()  # noqa: TL502" in (repo / "src" / "train.py").read_text(encoding="utf-8")


def test_add_noqa_writes_notebook_cells(repo, capsys, monkeypatch):
    source = ["import tensorflow as tf\n", "%matplotlib inline\n", "opt = tf.keras.optimizers.Adam(lr=0.001)"]
    (repo / "nb.ipynb").write_text(json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [],
                                                          "execution_count": None, "source": source}],
                                               "metadata": {}, "nbformat": 4, "nbformat_minor": 5}, indent=1),
                                   encoding="utf-8")
    code, _, err = _tapelint(["nb.ipynb", "--add-noqa"], capsys, monkeypatch)
    assert code == 0 and "Added 1 noqa directive in 1 file." in err
    cell = json.loads((repo / "nb.ipynb").read_text(encoding="utf-8"))["cells"][0]["source"]
    assert cell[2] == "opt = tf.keras.optimizers.Adam(lr=0.001)  # noqa: TL501" and cell[1] == "%matplotlib inline\n"
    code, out, _ = _tapelint(["nb.ipynb"], capsys, monkeypatch)
    assert code == 0 and _codes(out) == []


@pytest.mark.parametrize("extra, message", [
    (["--fix"], "--fix or --diff"), (["--statistics"], "--statistics"), (["-"], "standard input"),
])
def test_add_noqa_refuses_what_it_cannot_combine_with(repo, capsys, monkeypatch, extra, message):
    code, _, err = _tapelint(["--add-noqa", "other.py", *extra], capsys, monkeypatch)
    assert code == 2 and message in err


# --- no path means the current folder -------------------------------------------------------------------------

@pytest.mark.parametrize("argv", [[], ["check"], ["--select", "TL5"], ["check", "-q"]])
def test_no_path_checks_the_current_folder(repo, capsys, monkeypatch, argv):
    assert launch.quick_check_arguments(argv)["paths"] == ["."]  # type: ignore[index]
    for quick in (False, True):
        code, out, _ = _tapelint(argv, capsys, monkeypatch, quick=quick)
        assert code == 1 and "src/train.py:" in out and "other.py:" in out, out


def test_no_path_with_stdin_filename_reads_standard_input(repo, capsys, monkeypatch):
    assert launch.quick_check_arguments(["--stdin-filename", "x.py"])["paths"] == ["-"]  # type: ignore[index]
    monkeypatch.setattr(sys, "stdin", type("In", (), {"buffer": __import__("io").BytesIO(TRAIN.encode())})())
    code, out, _ = _tapelint(["check", "--stdin-filename", "x.py"], capsys, monkeypatch)
    assert code == 1 and "x.py:" in out and "other.py" not in out


def test_help_still_prints_help(capsys, monkeypatch):
    code, out, _ = _tapelint(["--help"], capsys, monkeypatch)
    assert code == 0 and "Usage:" in out and "check the current folder" in out


def test_add_noqa_keeps_line_endings_and_the_files_encoding(repo, capsys, monkeypatch):
    source = ("# -*- coding: latin-1 -*-\r\nimport tensorflow as tf\r\n\r\n"
              "opt = tf.keras.optimizers.Adam(lr=0.001)  # caf\u00e9\r\nx = 1\r\n")
    (repo / "legacy.py").write_bytes(source.encode("latin-1"))
    code, _, err = _tapelint(["legacy.py", "--add-noqa"], capsys, monkeypatch)
    assert code == 0 and "Added 1 noqa directive in 1 file." in err
    assert (repo / "legacy.py").read_bytes() == source.replace(
        "caf\u00e9\r\n", "caf\u00e9  # noqa: TL501\r\n").encode("latin-1")

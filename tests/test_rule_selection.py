"""Which rules run: the defaults, select / extend-select / ignore, and the command line on top of the
config file with ruff's precedence."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint.cli import app
from tapelint.registry import resolve

PROGRAM = """import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(lr=0.001)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""


def codes(*selection: list[str] | None) -> set[str]:
    select, extend, ignore = selection
    return set(resolve(select, extend or [], ignore or []))


def test_the_more_specific_selector_wins():
    assert "TL101" in codes(["TL101"], None, ["TL1"])
    assert "TL101" not in codes(["TL1"], None, ["TL101"])
    assert "TL101" not in codes(["TL101"], None, ["TL101"])  # equal: ignore wins
    assert "TL101" in codes(None, ["TL101"], ["TL1"])


def test_defaults_and_off_by_default_rules():
    default = codes(None, None, None)
    assert "TL101" in default and "TL900" not in default
    assert "TL900" in codes(None, ["TL900"], None)
    assert "TL900" in codes(["ALL"], None, None)


def run(tmp_path: Path, config: str, *args: str) -> str:
    (tmp_path / "pyproject.toml").write_text(f"[tool.tapelint]\n{config}\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(PROGRAM, encoding="utf-8")
    result = CliRunner().invoke(app, [*args, str(tmp_path / "train.py")])
    return result.output


def test_select_on_the_command_line_overrides_the_config_ignore(tmp_path: Path):
    assert "TL501" not in run(tmp_path, 'ignore = ["TL501"]')
    out = run(tmp_path, 'ignore = ["TL501"]', "--select", "TL501")
    assert "TL501" in out and "TL101" not in out


def test_ignore_on_the_command_line_adds_to_the_config(tmp_path: Path):
    out = run(tmp_path, 'ignore = ["TL501"]', "--ignore", "TL101")
    assert "TL501" not in out and "TL101" not in out


def test_select_on_the_command_line_replaces_the_config_select(tmp_path: Path):
    out = run(tmp_path, 'select = ["TL101"]', "--select", "TL501")
    assert "TL501" in out and "TL101" not in out


def test_a_symlink_loop_is_a_one_line_error_not_an_internal_error(tmp_path: Path):
    loop = tmp_path / "loop.py"
    loop.symlink_to(loop)
    (tmp_path / "train.py").write_text(PROGRAM, encoding="utf-8")
    result = CliRunner().invoke(app, [str(loop), str(tmp_path / "train.py")])
    assert result.exit_code == 2
    assert "loop.py: cannot read (Too many levels of symbolic links)" in result.output
    assert "internal error" not in result.output
    assert "TL101" in result.output  # the other file is still linted


def test_a_finding_the_probe_refuted_is_shown_but_does_not_fail_the_run():
    import dataclasses

    from tapelint.commands import exit_code
    from tapelint.diagnostic import Diagnostic, ProbeVerdict, Severity

    finding = Diagnostic("train.py", 3, 0, 3, 5, "TL001", "optimizer-never-applied", "m", Severity.ERROR)
    refuted = dataclasses.replace(finding, probe=ProbeVerdict("refuted", "applied 3 times"))
    confirmed = dataclasses.replace(finding, probe=ProbeVerdict("confirmed", "weights never changed"))
    assert exit_code([refuted], [], exit_zero=False) == 0
    assert exit_code([refuted, confirmed], [], exit_zero=False) == 1
    assert exit_code([finding], [], exit_zero=False) == 1


def test_statistics_counts_findings_per_rule_most_first(tmp_path: Path):
    (tmp_path / "a.py").write_text(PROGRAM, encoding="utf-8")
    (tmp_path / "b.py").write_text(PROGRAM.replace("Adam(lr=0.001)", "Adam(lr=0.001, decay=1e-4)"),
                                   encoding="utf-8")
    result = CliRunner().invoke(app, ["--statistics", str(tmp_path)])
    assert result.exit_code == 1
    rows = [line.split("\t") for line in result.output.strip().splitlines()]
    # `decay=` has no safe fix, so TL501 is not marked all-fixable; `lr=` alone is.
    assert rows == [["3", "TL501", "[ ] removed-optimizer-argument"], ["2", "TL101", "[ ] softmax-output-with-from-logits"]]
    as_json = CliRunner().invoke(app, ["--statistics", "--format", "json", str(tmp_path)])
    data = __import__("json").loads(as_json.output)
    assert data[0] == {"code": "TL501", "name": "removed-optimizer-argument", "count": 3, "fixable": 2}
    (tmp_path / "b.py").unlink()
    single = CliRunner().invoke(app, ["--statistics", str(tmp_path)])
    assert "1\tTL501\t[*] removed-optimizer-argument" in single.output


def test_statistics_with_fix_is_a_usage_error(tmp_path: Path):
    (tmp_path / "a.py").write_text(PROGRAM, encoding="utf-8")
    result = CliRunner().invoke(app, ["--statistics", "--fix", str(tmp_path)])
    assert result.exit_code == 2 and "--statistics" in result.output


def test_a_folder_without_python_files_says_so_and_passes(tmp_path: Path):
    (tmp_path / "notes.txt").write_text("nothing to lint", encoding="utf-8")
    result = CliRunner().invoke(app, [str(tmp_path)])
    assert result.exit_code == 0
    assert "no Python files or notebooks found" in result.output


def _git_repo(tmp_path: Path) -> Path:
    import subprocess

    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / ".gitignore").write_text("out/\ngenerated_*.py\n", encoding="utf-8")
    for name in ("out/a.py", "src/b.py", "src/generated_c.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(PROGRAM, encoding="utf-8")
    return tmp_path


def _files_reported(output: str) -> set[str]:
    return {Path(line.split(":")[0]).name for line in output.splitlines() if ".py:" in line}


def test_walking_a_git_work_tree_skips_what_git_ignores(tmp_path: Path):
    import shutil

    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    repo = _git_repo(tmp_path)
    assert _files_reported(CliRunner().invoke(app, [str(repo)]).output) == {"b.py"}
    everything = CliRunner().invoke(app, ["--no-respect-gitignore", str(repo)]).output
    assert _files_reported(everything) == {"a.py", "b.py", "generated_c.py"}
    # Named explicitly, an ignored file or folder is linted: the user asked for it.
    named = CliRunner().invoke(app, [str(repo / "out"), str(repo / "src" / "generated_c.py")]).output
    assert _files_reported(named) == {"a.py", "generated_c.py"}
    (repo / "pyproject.toml").write_text("[tool.tapelint]\nrespect-gitignore = false\n", encoding="utf-8")
    assert _files_reported(CliRunner().invoke(app, [str(repo)]).output) == {"a.py", "b.py", "generated_c.py"}


def test_outside_a_git_work_tree_nothing_is_skipped_for_gitignore(tmp_path: Path):
    (tmp_path / ".gitignore").write_text("*.py\n", encoding="utf-8")
    (tmp_path / "train.py").write_text(PROGRAM, encoding="utf-8")
    assert _files_reported(CliRunner().invoke(app, [str(tmp_path)]).output) == {"train.py"}

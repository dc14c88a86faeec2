"""`--fix` never loses or half-writes what the user owns: read-only files and hard links are left alone
with a reason, owners are kept, and a run killed with SIGKILL (or two runs at once) leaves every file
either as it was or fully fixed, with no temporary file that outlives the next run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint.cli import app
from tapelint.atomic import TEMP_SUFFIX, remove_stale_temps

BEFORE = """import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(8, activation="relu"), tf.keras.layers.Dense(1)])
optimizer = tf.keras.optimizers.Adam(lr=0.001)
for x, y in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(tf.square(model(x, training=True) - y))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
"""
AFTER = BEFORE.replace("Adam(lr=0.001)", "Adam(learning_rate=0.001)")


def fix(*paths: Path):
    return CliRunner().invoke(app, ["--fix", *map(str, paths)])


def test_a_read_only_file_is_left_alone_with_a_reason(tmp_path: Path):
    path = tmp_path / "train.py"
    path.write_text(BEFORE)
    path.chmod(0o444)
    result = fix(path)
    assert result.exit_code == 2
    assert "train.py: is read-only; not fixed" in result.output
    assert path.read_text() == BEFORE
    assert "TL501" in result.output  # the finding is still reported


def test_a_hard_linked_file_is_not_split_from_its_twin(tmp_path: Path):
    path = tmp_path / "train.py"
    path.write_text(BEFORE)
    twin = tmp_path / "twin.txt"
    os.link(path, twin)
    result = fix(path)
    assert result.exit_code == 2
    assert "has 2 hard links" in result.output
    assert path.read_text() == twin.read_text() == BEFORE
    assert os.stat(path).st_ino == os.stat(twin).st_ino


def test_a_writable_file_is_fixed_and_keeps_its_mode(tmp_path: Path):
    path = tmp_path / "train.py"
    path.write_text(BEFORE)
    path.chmod(0o640)
    result = fix(path)
    assert result.exit_code == 0, result.output
    assert path.read_text() == AFTER
    assert path.stat().st_mode & 0o777 == 0o640


def test_an_edit_saved_while_the_fix_runs_is_kept_and_the_file_left_alone(tmp_path: Path, monkeypatch):
    # An editor saves the file after tapelint read it and before it renames the fixed text into place.
    import tapelint.fixes

    path = tmp_path / "train.py"
    other = tmp_path / "other.py"
    path.write_text(BEFORE)
    other.write_text(BEFORE)
    real_fix_text = tapelint.fixes.fix_text

    def fix_while_the_user_edits(text, name, config, *, unsafe=False):
        outcome = real_fix_text(text, name, config, unsafe=unsafe)
        if Path(name).name == "train.py":
            with open(path, "a") as handle:
                handle.write("important_user_edit = 1\n")
        return outcome

    monkeypatch.setattr(tapelint.fixes, "fix_text", fix_while_the_user_edits)
    result = fix(path, other)
    assert path.read_text() == BEFORE + "important_user_edit = 1\n"
    assert result.exit_code == 2
    assert "train.py: changed on disk while it was being fixed; left as it is" in result.output
    assert other.read_text() == AFTER  # the other file is still fixed
    assert "Fixed 1 finding in 1 file." in result.output
    assert not list(tmp_path.glob("*" + TEMP_SUFFIX))


def test_a_file_removed_while_the_fix_runs_is_not_brought_back(tmp_path: Path, monkeypatch):
    import tapelint.fixes

    path = tmp_path / "train.py"
    path.write_text(BEFORE)
    real_fix_text = tapelint.fixes.fix_text

    def fix_while_the_user_deletes(text, name, config, *, unsafe=False):
        outcome = real_fix_text(text, name, config, unsafe=unsafe)
        path.unlink()
        return outcome

    monkeypatch.setattr(tapelint.fixes, "fix_text", fix_while_the_user_deletes)
    result = fix(path)
    assert result.exit_code == 2 and "changed on disk while it was being fixed" in result.output
    assert not path.exists()


def test_a_link_to_a_file_outside_the_fixed_folder_is_reported_but_not_written_through(tmp_path: Path):
    # A cloned repository can hold `a.py -> ../../elsewhere/victim.py`; --fix must not rewrite the victim.
    (tmp_path / "tree").mkdir()
    (tmp_path / "outside").mkdir()
    victim = tmp_path / "outside" / "victim.py"
    victim.write_text(BEFORE)
    (tmp_path / "tree" / "a.py").symlink_to("../outside/victim.py")
    result = fix(tmp_path / "tree")
    assert victim.read_text() == BEFORE
    assert f"a.py: a link to {victim.resolve()}, outside the folders being fixed and their project; not fixed" \
        in result.output
    assert "TL501" in result.output and "Fixed" not in result.output  # still reported, as before
    assert result.exit_code == 1
    result = fix(tmp_path / "tree" / "a.py")  # named on its own, the link leads out of its folder all the same
    assert victim.read_text() == BEFORE and "not fixed" in result.output


def test_a_link_to_a_file_inside_the_fixed_folder_is_fixed_through_its_target(tmp_path: Path):
    (tmp_path / "lib").mkdir()
    target = tmp_path / "lib" / "train.py"
    target.write_text(BEFORE)
    link = tmp_path / "alias.py"
    link.symlink_to("lib/train.py")
    result = fix(link)
    assert result.exit_code == 0, result.output
    assert link.is_symlink() and target.read_text() == AFTER


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="only root can give files away")
def test_fixing_as_root_keeps_the_owner(tmp_path: Path):
    path = tmp_path / "train.py"
    path.write_text(BEFORE)
    os.chown(path, 4321, 4321)
    assert fix(path).exit_code == 0
    assert (path.stat().st_uid, path.stat().st_gid) == (4321, 4321)
    assert path.read_text() == AFTER


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_temporaries_of_a_killed_run_are_removed_and_a_live_run_s_are_kept(tmp_path: Path):
    path = tmp_path / "train.py"
    path.write_text(BEFORE)
    stale = tmp_path / f".train.py.{_dead_pid()}.abc123{TEMP_SUFFIX}"
    stale.write_text(BEFORE[:40])
    live = tmp_path / f".train.py.{os.getppid()}.def456{TEMP_SUFFIX}"
    live.write_text(BEFORE[:40])
    other = tmp_path / f".other.py.{_dead_pid()}.ghi789{TEMP_SUFFIX}"
    other.write_text("x")
    remove_stale_temps(path)
    assert not stale.exists()
    assert live.exists()  # a concurrent run may still rename it into place
    assert other.exists()  # another file's business, cleaned when that file is fixed


def _tree(root: Path, count: int) -> list[Path]:
    paths = []
    for index in range(count):
        folder = root / f"pkg{index % 10}"
        folder.mkdir(exist_ok=True)
        path = folder / f"train_{index}.py"
        path.write_text(BEFORE)
        paths.append(path)
    return paths


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "tapelint", *args]


@pytest.mark.slow
def test_kill_9_in_the_middle_of_a_fix_run_leaves_every_file_old_or_new(tmp_path: Path):
    paths = _tree(tmp_path, 1000)
    process = subprocess.Popen(_cli("--fix", "--jobs", "1", str(tmp_path)), stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    # Wait until the run is writing (some files fixed), then kill it without warning.
    while time.monotonic() < deadline and not any(p.read_text() == AFTER for p in paths[::25]):
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    process.wait()
    contents = [p.read_text() for p in paths]
    assert set(contents) <= {BEFORE, AFTER}
    assert BEFORE in contents or AFTER in contents
    # The next run finishes the job and sweeps what the killed run left behind.
    rerun = subprocess.run(_cli("--fix", str(tmp_path)), capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    assert all(p.read_text() == AFTER for p in paths)
    assert not list(tmp_path.rglob(f"*{TEMP_SUFFIX}"))


@pytest.mark.slow
def test_two_fix_runs_at_once_corrupt_nothing(tmp_path: Path):
    paths = _tree(tmp_path, 200)
    runs = [subprocess.Popen(_cli("--fix", "--jobs", "1", str(tmp_path)), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for run in runs:
        _, stderr = run.communicate(timeout=600)
        # A file the other run fixed after this one read it is left to the other run, and said so (exit 2).
        errors = [line for line in stderr.splitlines() if line.startswith("tapelint: error:")]
        assert all(line.endswith("changed on disk while it was being fixed; left as it is (run --fix again)")
                   for line in errors), stderr
        assert run.returncode == 2 if errors else run.returncode in (0, 1)
    assert all(p.read_text() == AFTER for p in paths)
    assert not list(tmp_path.rglob(f"*{TEMP_SUFFIX}"))


@pytest.mark.slow
def test_ctrl_c_stops_a_parallel_run_promptly_with_one_line(tmp_path: Path):
    for index in range(400):
        (tmp_path / f"train_{index}.py").write_text(BEFORE * 20, encoding="utf-8")
    process = subprocess.Popen(_cli("--jobs", "2", str(tmp_path)), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                               text=True, start_new_session=True)
    time.sleep(4.0)  # the workers are linting
    started = time.monotonic()
    os.killpg(process.pid, signal.SIGINT)  # what a terminal's Ctrl-C does: the whole foreground group
    _, err = process.communicate(timeout=60)
    assert time.monotonic() - started < 2.0
    assert process.returncode == 130
    assert err.strip().splitlines() == ["tapelint: interrupted"]

"""`tapelint --fix`, `--unsafe-fixes` and `--diff` as a user runs them."""

from __future__ import annotations

import ast
import os
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tapelint.config import Config
from tapelint.atomic import write_atomic
from tapelint.fixes import fix_source

# The Keras 3 breakages of seed report 2 (a VGG16 trained in a GradientTape loop on CIFAR-10).
SEED2 = '''\
import tensorflow as tf


def main(model, train_dataset):
    # Instantiate an optimizer to train the model.
    optimizer = tf.keras.optimizers.Adam(lr=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-08, decay=0.0)
    loss_fn = tf.keras.losses.CategoricalCrossentropy()
    train_acc_metric = tf.keras.metrics.CategoricalAccuracy()

    for epoch in range(100):
      for step, (x_batch_train, y_batch_train) in enumerate(train_dataset):
        with tf.GradientTape() as tape:
          logits = model(x_batch_train)
          loss_value = loss_fn(y_batch_train, logits)
        grads = tape.gradient(loss_value, model.trainable_variables)
        optimizer.apply_gradients(zip(grads, model.trainable_variables))
        train_acc_metric(y_batch_train, logits)
      train_acc_metric.reset_states()
'''

DECAYING = '''\
import tensorflow as tf

optimizer = tf.keras.optimizers.Adam(learning_rate=0.001, decay=1e-4)
'''

CLEAN = '''\
import tensorflow as tf

optimizer = tf.keras.optimizers.Adam(learning_rate=0.001)
'''


def tapelint(*args: str, cwd: Path, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "tapelint", *args], cwd=cwd, input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture
def seed2(tmp_path: Path) -> Path:
    path = tmp_path / "train_vgg.py"
    path.write_text(SEED2, encoding="utf-8")
    return path


def test_fix_repairs_the_keras3_breakages_of_seed_2(seed2: Path):
    run = tapelint("--fix", seed2.name, cwd=seed2.parent)
    fixed = seed2.read_text(encoding="utf-8")
    assert "Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-08)" in fixed
    assert "lr=" not in fixed and "decay" not in fixed
    assert "train_acc_metric.reset_state()" in fixed
    # Everything else is byte for byte what the user wrote, comments and odd indentation included.
    assert fixed.replace("learning_rate=", "lr=").replace("1e-08)", "1e-08, decay=0.0)").replace(
        "reset_state()", "reset_states()") == SEED2
    ast.parse(fixed)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Fixed 3 findings in 1 file." in run.stdout
    assert "All checks passed" in run.stdout


def test_applying_fixes_twice_changes_nothing_the_second_time(seed2: Path):
    tapelint("--fix", str(seed2), cwd=seed2.parent)
    once = seed2.read_bytes()
    before = seed2.stat().st_mtime_ns
    time.sleep(0.01)
    again = tapelint("--fix", str(seed2), cwd=seed2.parent)
    assert seed2.read_bytes() == once
    assert seed2.stat().st_mtime_ns == before
    assert "Fixed" not in again.stdout and again.returncode == 0


def test_file_without_applicable_fix_is_never_rewritten(tmp_path: Path):
    clean = tmp_path / "clean.py"
    clean.write_text(CLEAN, encoding="utf-8")
    # An unsafe-only fix is not applicable under plain --fix either.
    unsafe_only = tmp_path / "decaying.py"
    unsafe_only.write_text(DECAYING, encoding="utf-8")
    past = time.time() - 3600
    for path in (clean, unsafe_only):
        os.utime(path, (past, past))
    stamps = {p: p.stat().st_mtime_ns for p in (clean, unsafe_only)}
    run = tapelint("--fix", ".", cwd=tmp_path)
    for path, stamp in stamps.items():
        assert path.stat().st_mtime_ns == stamp, f"{path.name} was rewritten"
    assert unsafe_only.read_text(encoding="utf-8") == DECAYING
    assert run.returncode == 1  # the decay finding remains
    assert "1 more with --unsafe-fixes" in run.stdout


def test_unsafe_fixes_replace_decay_by_a_schedule(tmp_path: Path):
    path = tmp_path / "decaying.py"
    path.write_text(DECAYING, encoding="utf-8")
    run = tapelint("--fix", "--unsafe-fixes", path.name, cwd=tmp_path)
    fixed = path.read_text(encoding="utf-8")
    assert "tf.keras.optimizers.schedules.InverseTimeDecay(0.001, decay_steps=1, decay_rate=1e-4)" in fixed
    assert "decay=" not in fixed
    ast.parse(fixed)
    assert run.returncode == 0, run.stdout + run.stderr


def test_fix_keeps_file_permissions(seed2: Path):
    seed2.chmod(0o750)
    tapelint("--fix", str(seed2), cwd=seed2.parent)
    assert "learning_rate=" in seed2.read_text(encoding="utf-8")
    assert stat.S_IMODE(seed2.stat().st_mode) == 0o750
    leftovers = [p.name for p in seed2.parent.iterdir() if p.name != seed2.name]
    assert leftovers == [], "the temporary file of the atomic write was left behind"


def test_write_atomic_replaces_through_a_symlink_and_keeps_mode(tmp_path: Path):
    target = tmp_path / "real.py"
    target.write_text("old\n", encoding="utf-8")
    target.chmod(0o640)
    link = tmp_path / "link.py"
    link.symlink_to(target)
    write_atomic(link, "new\n")
    assert link.is_symlink()
    assert target.read_text(encoding="utf-8") == "new\n"
    assert stat.S_IMODE(target.stat().st_mode) == 0o640


def test_diff_output_applies_with_git_apply_as_it_is(seed2: Path):
    run = tapelint("--diff", seed2.name, cwd=seed2.parent)
    patch = seed2.parent / "fix.patch"
    patch.write_text(run.stdout, encoding="utf-8")
    applied = subprocess.run(["git", "apply", "--unsafe-paths", "fix.patch"], cwd=seed2.parent,
                             capture_output=True, text=True)
    assert applied.returncode == 0, applied.stderr
    assert "Adam(learning_rate=0.001" in seed2.read_text(encoding="utf-8")
    assert tapelint("--diff", seed2.name, cwd=seed2.parent).stdout == ""


def test_diff_prints_the_change_and_writes_nothing(seed2: Path):
    stamp = seed2.stat().st_mtime_ns
    run = tapelint("--diff", seed2.name, cwd=seed2.parent)
    assert run.returncode == 1
    assert seed2.read_text(encoding="utf-8") == SEED2 and seed2.stat().st_mtime_ns == stamp
    assert f"--- a/{seed2.name}" in run.stdout and f"+++ b/{seed2.name}" in run.stdout
    assert "-    optimizer = tf.keras.optimizers.Adam(lr=0.001" in run.stdout
    assert "+    optimizer = tf.keras.optimizers.Adam(learning_rate=0.001" in run.stdout
    assert "+      train_acc_metric.reset_state()" in run.stdout
    assert "Would fix 3 findings in 1 file." in run.stderr


def test_diff_exits_zero_when_there_is_nothing_to_fix(tmp_path: Path):
    (tmp_path / "clean.py").write_text(CLEAN, encoding="utf-8")
    run = tapelint("--diff", "clean.py", cwd=tmp_path)
    assert run.returncode == 0 and run.stdout == ""


def test_exit_code_after_fix_reflects_what_remains(tmp_path: Path):
    path = tmp_path / "mixed.py"
    path.write_text(SEED2 + "\nopt2 = tf.keras.optimizers.SGD(learning_rate=0.1, decay=1e-3)\n", encoding="utf-8")
    run = tapelint("--fix", "--select", "TL5", path.name, cwd=tmp_path)
    assert run.returncode == 1
    assert "Fixed 3 findings in 1 file." in run.stdout
    assert "decay=" in run.stdout and "Found 1 finding" in run.stdout
    assert tapelint("--fix", "--select", "TL5", "--exit-zero", path.name, cwd=tmp_path).returncode == 0


def test_fix_with_stdin_prints_the_fixed_source(tmp_path: Path):
    run = tapelint("--fix", "-", cwd=tmp_path, stdin=SEED2)
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("import tensorflow as tf\n")
    assert "Adam(learning_rate=0.001, beta_1=0.9, beta_2=0.999, epsilon=1e-08)" in run.stdout
    assert "Fixed 3 findings" in run.stderr  # the report goes to stderr, the code to stdout
    ast.parse(run.stdout)


def test_diff_with_stdin_shows_the_change(tmp_path: Path):
    run = tapelint("--diff", "--stdin-filename", "loop.py", "-", cwd=tmp_path, stdin=SEED2)
    assert run.returncode == 1
    assert "--- a/loop.py" in run.stdout and "+    optimizer = tf.keras.optimizers.Adam(learning_rate" in run.stdout


def test_fix_keeps_a_byte_order_mark_and_crlf_line_endings(tmp_path: Path):
    path = tmp_path / "windows.py"
    path.write_bytes(b"\xef\xbb\xbf" + SEED2.replace("\n", "\r\n").encode("utf-8"))
    run = tapelint("--fix", path.name, cwd=tmp_path)
    data = path.read_bytes()
    assert data.startswith(b"\xef\xbb\xbf"), run.stdout + run.stderr
    assert b"learning_rate=0.001" in data
    assert data.count(b"\r\n") == SEED2.count("\n")


def test_unreadable_file_is_a_one_line_error_during_fix(tmp_path: Path):
    path = tmp_path / "latin1.py"
    path.write_bytes("import tensorflow as tf\n# caf\xe9\n".encode("latin-1"))
    run = tapelint("--fix", path.name, cwd=tmp_path)
    assert run.returncode == 2
    assert run.stderr.startswith("tapelint: error: latin1.py: not valid UTF-8")
    assert "Traceback" not in run.stderr


def test_fix_source_never_leaves_code_that_does_not_parse():
    outcome = fix_source(SEED2, "seed2.py", Config(), unsafe=True)
    compile(outcome.source, "fixed.py", "exec")
    assert outcome.applied == 3
    assert not [d for d in outcome.remaining if d.fix is not None]


def test_fix_with_json_format_keeps_stdout_machine_readable(seed2: Path):
    run = tapelint("--fix", "--format", "json", seed2.name, cwd=seed2.parent)
    import json

    report = json.loads(run.stdout)
    assert report["summary"]["total"] == 0 and run.returncode == 0
    assert "Fixed 3 findings in 1 file." in run.stderr


def test_probe_cannot_run_with_fix(seed2: Path):
    run = tapelint("--fix", "--probe", seed2.name, seed2.name, cwd=seed2.parent)
    assert run.returncode == 2 and run.stderr.startswith("tapelint: error: --probe cannot be combined")
    assert seed2.read_text(encoding="utf-8") == SEED2


def test_a_fix_that_would_break_the_syntax_is_not_applied(monkeypatch):
    import tapelint.fixes as fixes
    from tapelint.diagnostic import Diagnostic, Fix, Severity, TextEdit

    broken = Fix("break it", (TextEdit(1, 0, 1, 1, "("),), True)
    good = Fix("rename", (TextEdit(2, 0, 2, 1, "z"),), True)
    found = [Diagnostic("x.py", 1, 0, 1, 1, "TL999", "internal-error", "m", Severity.ERROR, fix=broken),
             Diagnostic("x.py", 2, 0, 2, 1, "TL999", "internal-error", "m", Severity.ERROR, fix=good)]
    monkeypatch.setattr(fixes, "lint_source", lambda source, *a, **k: found if source == "x = 1\ny = 2\n" else [])
    outcome = fixes.fix_source("x = 1\ny = 2\n", "x.py", Config())
    assert outcome.source == "x = 1\nz = 2\n" and outcome.applied == 1

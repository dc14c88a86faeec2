"""`check --show-settings` and `check --show-files` (as ruff prints them), `--statistics` columns, and the
TL302 wording on a deliberately frozen backbone (issue 29, items 2 and 8)."""

from __future__ import annotations

import json
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tapelint.cli import app
from tapelint.config import Config, parse
from tapelint.engine import lint_source

TRAIN = '''import tensorflow as tf

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

NOTEBOOK = json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": ["import tensorflow as tf\n"]}],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


@pytest.fixture
def nested(tmp_path: Path) -> Path:
    """A project with a nested project inside it, an excluded folder, a notebook, and (in a git work tree)
    a git-ignored file."""
    (tmp_path / "pyproject.toml").write_text(textwrap.dedent('''
        [tool.tapelint]
        ignore = ["TL101"]
        extend-exclude = ["legacy"]
        fail-on = "error"
        [tool.tapelint.per-file-ignores]
        "tests/*" = ["TL1"]
    '''))
    for name in ("train.py", "tests/test_train.py", "legacy/old.py", "out/generated.py", "lab/train.py",
                 "lab/sub/model.py"):
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(TRAIN)
    (tmp_path / "lab" / "explore.ipynb").write_text(NOTEBOOK)
    (tmp_path / "lab" / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL0"]\npreview = true\n'
                                                     '[tool.tapelint.probe]\nsteps = 3\n')
    (tmp_path / "notes.txt").write_text("not Python\n")
    if shutil.which("git") is not None:
        subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
        (tmp_path / ".gitignore").write_text("out/\n")
    return tmp_path


def _settings(output: str) -> dict[str, str]:
    return {key.strip(): value.strip() for key, _, value in
            (line.partition(" = ") for line in output.splitlines() if " = " in line)}


def test_show_settings_names_the_nearest_pyproject_and_the_resolved_selection(nested: Path):
    result = CliRunner().invoke(app, ["check", "--show-settings", str(nested / "train.py")])
    assert result.exit_code == 0, result.output
    assert f"Settings path: {(nested / 'pyproject.toml').resolve()}" in result.output
    keys = _settings(result.output)
    assert keys["ignore"] == '["TL101"]' and keys["fail-on"] == '"error"'
    assert keys["extend-exclude"] == '["legacy"]' and keys["per-file-ignores.matching"] == "[]"
    assert keys["cache-dir"] == json.dumps(str((nested / ".tapelint_cache").resolve()))
    assert '"TL001 optimizer-never-applied",' in result.output
    assert "TL101 softmax-output-with-from-logits" not in result.output  # ignored by the config
    assert keys["steps"] == "1"  # the probe's default


def test_show_settings_of_a_file_in_a_nested_project_shows_the_nested_config(nested: Path):
    result = CliRunner().invoke(app, ["check", "--show-settings", str(nested / "lab" / "sub" / "model.py")])
    assert result.exit_code == 0, result.output
    assert f"Settings path: {(nested / 'lab' / 'pyproject.toml').resolve()}" in result.output
    keys = _settings(result.output)
    assert keys["select"] == '["TL0"]' and keys["preview"] == "true" and keys["ignore"] == "[]"
    assert keys["steps"] == "3" and keys["fail-on"] == '"warning"'
    enabled = [line.strip().strip('",') for line in result.output.splitlines() if line.startswith('    "TL')]
    assert enabled and all(code.startswith("TL0") for code in enabled)


def test_show_settings_lists_the_per_file_ignores_that_match_the_file(nested: Path):
    result = CliRunner().invoke(app, ["check", "--show-settings", str(nested / "tests" / "test_train.py")])
    keys = _settings(result.output)
    assert keys["per-file-ignores.matching"] == '["TL1"]'
    assert "TL102 " not in result.output and "TL001 optimizer-never-applied" in result.output


def test_show_settings_follow_the_command_line_and_config_file(nested: Path, tmp_path_factory):
    other = tmp_path_factory.mktemp("cfg") / "tapelint.toml"
    other.write_text('select = ["TL2"]\n')
    result = CliRunner().invoke(app, ["check", "--show-settings", "--config", str(other), "--extend-select", "TL001",
                                      str(nested / "lab" / "train.py")])
    assert result.exit_code == 0, result.output
    assert f"Settings path: {other}" in result.output
    keys = _settings(result.output)
    assert keys["select"] == '["TL2"]' and keys["extend-select"] == '["TL001"]'


def test_show_settings_without_a_config_says_defaults(tmp_path: Path):
    (tmp_path / "train.py").write_text(TRAIN)
    result = CliRunner().invoke(app, ["check", "--show-settings", str(tmp_path / "train.py")])
    assert result.exit_code == 0
    assert "Settings path: none (defaults" in result.output
    assert _settings(result.output)["select"] == "(the defaults)"


def test_show_settings_is_stable_and_lints_nothing(nested: Path):
    first = CliRunner().invoke(app, ["check", "--show-settings", str(nested / "train.py")]).output
    again = CliRunner().invoke(app, ["check", "--show-settings", str(nested / "train.py")]).output
    assert first == again and "Found" not in first and "TL101 `" not in first
    assert not (nested / ".tapelint_cache").exists()


def test_show_settings_of_a_missing_file_is_a_usage_error(tmp_path: Path):
    result = CliRunner().invoke(app, ["check", "--show-settings", str(tmp_path / "nope.py")])
    assert result.exit_code == 2


def test_show_files_lists_what_a_run_lints_sorted(nested: Path):
    if shutil.which("git") is None:
        pytest.skip("git is not installed")
    result = CliRunner().invoke(app, ["check", "--show-files", str(nested)])
    assert result.exit_code == 0, result.output
    shown = [Path(line).relative_to(nested).as_posix() for line in result.output.splitlines()]
    # Not legacy/ (extend-exclude), not out/ (.gitignore), not notes.txt; the notebook is there.
    assert shown == ["lab/explore.ipynb", "lab/sub/model.py", "lab/train.py", "tests/test_train.py", "train.py"]
    assert result.output.splitlines() == sorted(result.output.splitlines())
    everything = CliRunner().invoke(app, ["check", "--show-files", "--no-respect-gitignore", str(nested)]).output
    assert any(line.endswith("generated.py") for line in everything.splitlines())


def test_show_files_follows_each_nested_config(nested: Path):
    (nested / "lab" / "pyproject.toml").write_text('[tool.tapelint]\ninclude-notebooks = false\n')
    result = CliRunner().invoke(app, ["check", "--show-files", str(nested / "lab"), str(nested / "train.py")])
    assert [Path(line).name for line in result.output.splitlines()] == ["model.py", "train.py", "train.py"]


def test_show_files_of_a_missing_path_exits_2(tmp_path: Path):
    (tmp_path / "a.py").write_text(TRAIN)
    result = CliRunner().invoke(app, ["check", "--show-files", str(tmp_path / "a.py"), str(tmp_path / "gone")])
    assert result.exit_code == 2
    assert result.stdout.splitlines() == [str(tmp_path / "a.py")]


@pytest.mark.parametrize("other", [["--show-files"], ["--fix"], ["--diff"], ["--watch"]])
def test_show_settings_with_another_mode_is_a_usage_error(tmp_path: Path, other: list[str]):
    (tmp_path / "a.py").write_text(TRAIN)
    result = CliRunner().invoke(app, ["check", "--show-settings", *other, str(tmp_path / "a.py")])
    assert result.exit_code == 2


def test_statistics_columns_line_up_whether_or_not_a_rule_is_fixable(tmp_path: Path):
    (tmp_path / "a.py").write_text(TRAIN.replace("Adam(1e-3)", "Adam(lr=0.001)")
                                   .replace("    optimizer.apply_gradients(zip(grads, model.trainable_variables))\n", ""))
    (tmp_path / "b.py").write_text(TRAIN.replace("Adam(1e-3)", "Adam(lr=0.001)"))
    result = CliRunner().invoke(app, ["check", "--statistics", "--preview", str(tmp_path)])
    lines = result.output.splitlines()
    assert len(lines) >= 3, result.output
    marks = [line.split("\t")[2][:4] for line in lines]
    assert "[*] " in marks and "[ ] " in marks and set(marks) <= {"[*] ", "[ ] "}
    # Expanded as a terminal shows tabs, every rule name starts in the same column.
    starts = {len(line.expandtabs()) - len(line.split("\t")[2][4:]) for line in lines}
    assert len(starts) == 1


BACKBONE = '''
import tensorflow as tf

base_model = tf.keras.applications.MobileNetV2(input_shape=(160, 160, 3), include_top=False, weights="imagenet")
base_model.trainable = False
inputs = tf.keras.Input(shape=(160, 160, 3))
x = base_model(inputs, training=False)
x = tf.keras.layers.GlobalAveragePooling2D()(x)
x = tf.keras.layers.Dropout(0.2)(x)
outputs = tf.keras.layers.Dense(1)(x)
model = tf.keras.Model(inputs, outputs)
optimizer = tf.keras.optimizers.Adam(1e-4)
loss_fn = tf.keras.losses.BinaryCrossentropy(from_logits=True)

for images, labels in batches:
    with tf.GradientTape() as tape:
        logits = model(images)
        loss = loss_fn(labels, logits)
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''


def _tl302(source: str) -> list[str]:
    config = parse({"select": ["TL302"], "preview": True}, "test", None)
    return [d.message for d in lint_source(source, "t.py", config)]


def test_frozen_backbone_batchnorm_is_not_said_to_depend_on_the_flag():
    # The Keras transfer-learning guide's model: a frozen MobileNetV2 called with training=False, and a
    # Dropout head. Its BatchNorm runs in inference mode whatever the outer call says; only the head's
    # Dropout depends on `training=True`.
    [message] = _tl302(BACKBONE)
    assert "`Dropout`" in message and "BatchNorm" not in message
    assert "so it runs its `Dropout` in inference mode: dropout is off" in message


@pytest.mark.parametrize("change", [
    ("x = base_model(inputs, training=False)", "x = base_model(inputs)"),  # frozen only
    ("base_model.trainable = False", "pass"),  # training=False only
])
def test_backbone_frozen_either_way_without_dropout_is_silent(change: tuple[str, str]):
    source = BACKBONE.replace("x = tf.keras.layers.Dropout(0.2)(x)\n", "").replace(*change)
    assert _tl302(source) == []


def test_trainable_backbone_batchnorm_is_still_reported():
    source = BACKBONE.replace("base_model.trainable = False\n", "").replace("base_model(inputs, training=False)",
                                                                             "base_model(inputs)")
    [message] = _tl302(source)
    assert "BatchNormalization (in `MobileNetV2`)" in message and "never updates them" in message


def test_frozen_backbone_in_a_sequential_model_is_silent():
    source = '''
import tensorflow as tf

backbone = tf.keras.applications.MobileNetV2(include_top=False, weights="imagenet", pooling="avg")
backbone.trainable = False
model = tf.keras.Sequential([backbone, tf.keras.layers.Dense(5)])
optimizer = tf.keras.optimizers.Adam(1e-4)
for images, labels in batches:
    with tf.GradientTape() as tape:
        loss = tf.reduce_mean(model(images))
    grads = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(grads, model.trainable_variables))
'''
    assert _tl302(source) == []
    assert _tl302(source.replace("backbone.trainable = False\n", ""))


def test_tl302_message_reads_well_with_one_layer_kind():
    [message] = _tl302(BACKBONE)
    assert " run in inference mode" not in message and "its `Dropout` run" not in message
    assert Config().fail_on == "warning"  # unchanged default, the finding still fails the run

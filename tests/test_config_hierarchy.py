"""Hierarchical settings, as in ruff: each file follows the nearest pyproject.toml with [tool.tapelint]
at or above it, the command line applies on top of each, `--config` overrides them all, and the order of
the paths on the command line changes nothing."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from tapelint.commands import lint_inputs, settings
from tapelint.config import Config, ConfigFinder

# Two findings in one realistic step: a softmax fed to a from_logits loss (TL101), and an optimizer
# that never applies the gradients (TL001).
TRAIN = '''import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10, activation="softmax")])
optimizer = tf.keras.optimizers.Adam(1e-3)
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)


def train_step(x, y):
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    grads = tape.gradient(loss, model.trainable_variables)
    return loss
'''


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.tapelint]\nignore = ["TL101"]\n')
    (tmp_path / "train.py").write_text(TRAIN)
    lab = tmp_path / "research"
    lab.mkdir()
    (lab / "pyproject.toml").write_text('[tool.tapelint]\nignore = ["TL001"]\n')
    (lab / "train.py").write_text(TRAIN)
    plain = tmp_path / "scripts"
    plain.mkdir()
    (plain / "pyproject.toml").write_text('[tool.black]\nline-length = 100\n')  # no tapelint table
    (plain / "train.py").write_text(TRAIN)
    return tmp_path


def findings(paths: list[Path], config_file: Path | None = None, ignore: list[str] | None = None,
             cwd: Path | None = None) -> list[tuple[str, str]]:
    def adjust(config: Config) -> Config:
        # As with --preview: TL001 may be a preview rule (tapelint.maturity), and these tests are about
        # which settings each file gets, not about preview.
        return dataclasses.replace(config.with_cli(None, ignore, None), preview=True)

    names = [str(p) for p in paths]
    config, finder = settings(names, config_file, None, adjust)
    result = lint_inputs(names, config, jobs=1, finder=finder)
    assert not result.errors
    base = cwd or paths[0].parent
    return sorted((Path(d.path).resolve().relative_to(base.resolve()).as_posix(), d.code) for d in result.diagnostics)


def test_each_file_follows_the_nearest_config(repo):
    assert findings([repo], cwd=repo) == [
        ("research/train.py", "TL101"),  # research/ ignores TL001
        ("scripts/train.py", "TL001"),   # scripts/ has a pyproject without [tool.tapelint]: the root's applies
        ("train.py", "TL001"),
    ]


def test_the_order_of_the_paths_changes_nothing(repo):
    forward = findings([repo / "train.py", repo / "research"], cwd=repo)
    backward = findings([repo / "research", repo / "train.py"], cwd=repo)
    assert forward == backward == [("research/train.py", "TL101"), ("train.py", "TL001")]


def test_the_command_line_applies_on_top_of_every_config(repo):
    assert findings([repo], ignore=["TL101"], cwd=repo) == [("scripts/train.py", "TL001"), ("train.py", "TL001")]


def test_an_explicit_config_is_used_for_every_file(repo):
    strict = repo / "strict.toml"
    strict.write_text('select = ["TL101"]\n')
    assert findings([repo], config_file=strict, cwd=repo) == [
        ("research/train.py", "TL101"), ("scripts/train.py", "TL101"), ("train.py", "TL101")]


def test_per_file_ignores_are_relative_to_their_own_config(repo):
    (repo / "research" / "pyproject.toml").write_text(
        '[tool.tapelint]\nper-file-ignores = { "train.py" = ["TL1"] }\n')
    assert findings([repo / "research"], cwd=repo) == [("research/train.py", "TL001")]


def test_the_finder_reads_each_folder_once(repo, monkeypatch):
    import tapelint.config as config_mod

    reads: list[Path] = []
    original = config_mod._has_tapelint_table

    def counting(candidate: Path) -> bool:
        reads.append(candidate)
        return original(candidate)

    monkeypatch.setattr(config_mod, "_has_tapelint_table", counting)
    finder = ConfigFinder()
    for _ in range(3):
        assert finder.config_file(repo / "research" / "train.py") == (repo / "research" / "pyproject.toml").resolve()
        assert finder.config_file(repo / "scripts" / "train.py") == (repo / "pyproject.toml").resolve()
    assert len(reads) == len(set(reads)) == 3  # research/, scripts/, and the root (once)


def test_resolved_follows_links_as_path_resolve_does_and_sees_a_changed_link_in_the_next_run(tmp_path):
    import os

    from tapelint.files import forget_resolved_folders, resolved

    real = tmp_path / "real" / "pkg"
    real.mkdir(parents=True)
    (real / "train.py").write_text("x = 1\n")
    other = tmp_path / "other"
    other.mkdir()
    (other / "train.py").write_text("x = 2\n")
    (tmp_path / "link").symlink_to(real)
    (tmp_path / "file_link.py").symlink_to(real / "train.py")
    forget_resolved_folders()
    for path in (tmp_path / "link" / "train.py", tmp_path / "file_link.py", tmp_path / "link" / ".." / "link",
                 tmp_path / "link" / "missing.py", tmp_path / "real" / "pkg" / "train.py"):
        assert resolved(path) == path.resolve(), path
    relative = Path(os.path.relpath(tmp_path / "link" / "train.py"))
    assert resolved(relative) == (real / "train.py").resolve()
    (tmp_path / "link").unlink()
    (tmp_path / "link").symlink_to(other)
    forget_resolved_folders()  # a new run
    assert resolved(tmp_path / "link" / "train.py") == (other / "train.py").resolve()
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    looped = resolved(tmp_path / "a" / "train.py")  # a loop: absolute, no error
    assert looped.is_absolute() and looped.name == "train.py"

"""The pre-commit hooks, run by the real `pre-commit` tool on a buggy training script in a scratch git repo.

pre-commit installs this project from a git repository into a hook environment with pip, so the first run
needs the package index and takes a while; the environment is built once for the module.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = [
    pytest.mark.skipif(importlib.util.find_spec("pre_commit") is None,
                       reason="pre-commit is not installed (it comes with the `test` extra)"),
    pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed"),
    pytest.mark.skipif(not (ROOT / ".git").exists(), reason="needs a git checkout of tapelint to install the hooks from"),
]

BUGGY = '''\
import tensorflow as tf

model = tf.keras.Sequential([tf.keras.layers.Dense(10)])
loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)
optimizer = tf.keras.optimizers.Adam(lr=0.001, decay=0.0)
train_loss = tf.keras.metrics.Mean(name="train_loss")


def train_step(images, labels):
    with tf.GradientTape() as tape:
        logits = model(images, training=True)
        loss = loss_fn(labels, logits)
    gradients = tape.gradient(loss, model.trainable_variables)
    optimizer.apply_gradients(zip(gradients, model.trainable_variables))
    train_loss.update_state(loss)


for epoch in range(5):
    train_loss.reset_states()
    for images, labels in dataset:
        train_step(images, labels)
'''
FIXED = (BUGGY.replace("Adam(lr=0.001, decay=0.0)", "Adam(learning_rate=0.001)")
         .replace("train_loss.reset_states()", "train_loss.reset_state()"))

GIT_ENV = {
    "GIT_AUTHOR_NAME": "tapelint tests", "GIT_AUTHOR_EMAIL": "tests@tapelint.invalid",
    "GIT_COMMITTER_NAME": "tapelint tests", "GIT_COMMITTER_EMAIL": "tests@tapelint.invalid",
    "GIT_CONFIG_NOSYSTEM": "1",
}


def git(*args: str, cwd: Path) -> str:
    result = subprocess.run(["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *args],
                            cwd=cwd, env={**os.environ, **GIT_ENV}, capture_output=True, text=True, check=True)
    return result.stdout


@pytest.fixture(scope="module")
def hooks_repo(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """This working tree, uncommitted and untracked files included, committed into a scratch repository.

    pre-commit installs hooks from a git revision; a snapshot lets the test run what is on disk now without
    touching the checkout's own git state.
    """
    snapshot = tmp_path_factory.mktemp("tapelint-snapshot")
    listed = git("ls-files", "-z", "--cached", "--others", "--exclude-standard", cwd=ROOT)
    for name in filter(None, listed.split("\0")):
        source = ROOT / name
        if source.is_file():
            target = snapshot / name
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target)
    git("init", "-q", cwd=snapshot)
    git("add", "-A", cwd=snapshot)
    git("commit", "-q", "-m", "snapshot", cwd=snapshot)
    return snapshot, git("rev-parse", "HEAD", cwd=snapshot).strip()


@pytest.fixture(scope="module")
def pre_commit_home(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Shared by the module, so pre-commit builds the hook environment only once."""
    return tmp_path_factory.mktemp("pre-commit-home")


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A user's repository holding a training script with two Keras 3 breakages."""
    git("init", "-q", cwd=tmp_path)
    # Only the Keras 3 rules, so that rules added later cannot change what this test is about.
    (tmp_path / "pyproject.toml").write_text('[tool.tapelint]\nselect = ["TL5"]\n', encoding="utf-8")
    git("add", "pyproject.toml", cwd=tmp_path)
    git("commit", "-q", "-m", "start", cwd=tmp_path)
    stage(tmp_path, BUGGY)
    return tmp_path


def stage(project: Path, text: str) -> None:
    """Write and `git add` the script: pre-commit checks what is staged and stashes the rest."""
    (project / "train.py").write_text(text, encoding="utf-8")
    git("add", "train.py", cwd=project)


def pre_commit(args: list[str], project: Path, home: Path) -> subprocess.CompletedProcess:
    env = {**os.environ, **GIT_ENV, "PRE_COMMIT_HOME": str(home), "PRE_COMMIT_COLOR": "never",
           "PIP_DISABLE_PIP_VERSION_CHECK": "1", "SKIP": ""}
    return subprocess.run([sys.executable, "-m", "pre_commit", *args, "--files", "train.py"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=900)


def run_hook(hook: str, project: Path, hooks_repo: tuple[Path, str], home: Path) -> subprocess.CompletedProcess:
    """`pre-commit run HOOK` with a `.pre-commit-config.yaml` that points at this repository, as a user has it."""
    repo, rev = hooks_repo
    config = project.parent / f"{project.name}-pre-commit-config.yaml"
    config.write_text(
        f"repos:\n- repo: {repo.as_posix()}\n  rev: {rev}\n  hooks:\n  - id: tapelint\n  - id: tapelint-fix\n",
        encoding="utf-8",
    )
    return pre_commit(["run", hook, "--config", str(config)], project, home)


def test_try_repo_runs_the_lint_hook_which_fails_on_the_bug(project, hooks_repo, tmp_path_factory):
    # try-repo installs into a store of its own every time (it ignores PRE_COMMIT_HOME), so it runs once here.
    repo, rev = hooks_repo
    failed = pre_commit(["try-repo", str(repo), "tapelint", "--ref", rev], project,
                        tmp_path_factory.mktemp("try-repo-home"))
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "tapelint" in failed.stdout and "Failed" in failed.stdout
    assert "train.py:5:38: TL501" in failed.stdout
    assert re.search(r"train\.py:19:\d+: TL502", failed.stdout)
    assert (project / "train.py").read_text(encoding="utf-8") == BUGGY, "the lint hook never edits files"


def test_the_lint_hook_fails_on_the_bug_and_passes_once_the_file_is_fixed(project, hooks_repo, pre_commit_home):
    failed = run_hook("tapelint", project, hooks_repo, pre_commit_home)
    assert failed.returncode == 1, failed.stdout + failed.stderr
    assert "train.py:5:38: TL501" in failed.stdout

    stage(project, FIXED)
    passed = run_hook("tapelint", project, hooks_repo, pre_commit_home)
    assert passed.returncode == 0, passed.stdout + passed.stderr
    assert "Passed" in passed.stdout


def test_the_fix_hook_rewrites_the_file(project, hooks_repo, pre_commit_home):
    fixed = run_hook("tapelint-fix", project, hooks_repo, pre_commit_home)
    # pre-commit fails a hook that changed files, so that the user reviews and stages the fix.
    assert fixed.returncode == 1, fixed.stdout + fixed.stderr
    assert "files were modified by this hook" in fixed.stdout
    assert (project / "train.py").read_text(encoding="utf-8") == FIXED

    stage(project, FIXED)
    again = run_hook("tapelint-fix", project, hooks_repo, pre_commit_home)
    assert again.returncode == 0, again.stdout + again.stderr
    assert (project / "train.py").read_text(encoding="utf-8") == FIXED

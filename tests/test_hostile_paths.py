"""Hostile trees: kernel files and FIFOs behind `*.py` links, folder chains deeper than Python's recursion
limit, and folders that cannot be read. Each is a one-line error (or skipped), never a hang or a traceback,
and the other files are still linted."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from tapelint.config import Config, ConfigFinder
from tapelint.files import walk
from tapelint.runner import lint_paths

BAD = "import tensorflow as tf\nopt = tf.keras.optimizers.Adam(lr=0.01)\n"


def test_a_walk_refuses_links_to_kernel_files_and_skips_fifos(tmp_path: Path):
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "good.py").write_text(BAD, encoding="utf-8")
    (tree / "kmsg.py").symlink_to("/proc/kmsg" if os.geteuid() == 0 else "/proc/self/status")
    os.mkfifo(tmp_path / "pipe")
    (tree / "pipe.py").symlink_to(tmp_path / "pipe")
    os.mkfifo(tree / "fifo.py")
    result = lint_paths([tree], Config(), jobs=1)
    assert [d.code for d in result.diagnostics] == ["TL501"]
    assert result.errors == [f"{tree / 'kmsg.py'}: not a regular file (a kernel or device file, under /proc, "
                             "/sys or /dev)"]


def test_a_folder_chain_deeper_than_the_recursion_limit_is_walked(tmp_path: Path):
    # 1,000 deep (paths ~2,000 characters, under PATH_MAX): os.walk recursion raised RecursionError.
    fd = os.open(tmp_path, os.O_RDONLY)
    try:
        for _ in range(1000):  # each step relative to the last: the whole path is too long for one call
            os.mkdir("d", dir_fd=fd)
            deeper = os.open("d", os.O_RDONLY, dir_fd=fd)
            os.close(fd)
            fd = deeper
    finally:
        os.close(fd)
    (tmp_path / "d" / "d" / "t.py").write_text(BAD, encoding="utf-8")
    try:
        assert len(list(walk(tmp_path))) == 1001
        result = lint_paths([tmp_path], Config(), jobs=1)
        assert result.errors == []
        assert [(Path(d.path).name, d.code) for d in result.diagnostics] == [("t.py", "TL501")]
    finally:
        _remove_chain(tmp_path / "d")


def _remove_chain(top: Path) -> None:
    """Remove the chain deepest first: pytest's clean-up (shutil.rmtree) recurses, and would fail on it
    in a later session."""
    folders = [folder for folder, _, _ in walk(top)]
    for folder in reversed(folders):
        for entry in os.scandir(folder):
            if not entry.is_dir(follow_symlinks=False):
                os.unlink(entry.path)
        os.rmdir(folder)


def test_the_walk_prunes_subfolders_and_does_not_enter_linked_folders(tmp_path: Path):
    (tmp_path / "a" / "skip").mkdir(parents=True)
    (tmp_path / "b").mkdir()
    (tmp_path / "a" / "link").symlink_to(tmp_path / "b")
    seen = []
    for folder, subfolders, _ in walk(tmp_path):
        seen.append(os.path.relpath(folder, tmp_path))
        subfolders[:] = sorted(d for d in subfolders if d != "skip")
    assert seen == [".", "a", "b"]  # a/link is listed as a folder but not entered


def _deny_inside(monkeypatch: pytest.MonkeyPatch, locked: Path) -> None:
    """What a user without the right to read `locked` sees (the tests may run as root, who may read all)."""
    inside = str(locked) + os.sep

    def denied(path: object) -> bool:
        return os.fspath(path).startswith(inside) if isinstance(path, (str, os.PathLike)) else False

    def wrap(function):  # type: ignore[no-untyped-def]
        def checked(path, *args, **kwargs):  # type: ignore[no-untyped-def]
            if denied(path) or (function is real_scandir and os.fspath(path).rstrip(os.sep) == str(locked)):
                raise PermissionError(errno.EACCES, "Permission denied", os.fspath(path))
            return function(path, *args, **kwargs)
        return checked

    real_scandir = os.scandir
    for name in ("stat", "lstat", "open", "scandir"):
        monkeypatch.setattr(os, name, wrap(getattr(os, name)))
    real_access = os.access
    monkeypatch.setattr(os, "access", lambda path, mode, **kw: False if os.fspath(path) == str(locked)
                        else real_access(path, mode, **kw))


def test_an_unreadable_folder_named_on_the_command_line_is_one_error_and_the_rest_is_linted(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    locked, other = tmp_path / "locked", tmp_path / "other"
    locked.mkdir()
    other.mkdir()
    (locked / "x.py").write_text(BAD, encoding="utf-8")
    (other / "y.py").write_text(BAD, encoding="utf-8")
    _deny_inside(monkeypatch, locked)
    # The nearest-config lookup goes through the locked folder first (its pyproject.toml cannot be read).
    result = lint_paths([locked, other], Config(), jobs=1, finder=ConfigFinder())
    assert result.errors == [f"{locked}: cannot read the folder (permission denied)"]
    assert [(Path(d.path).name, d.code) for d in result.diagnostics] == [("y.py", "TL501")]


@pytest.mark.skipif(os.geteuid() == 0, reason="root reads folders whatever their mode")
def test_a_folder_with_mode_000_is_one_error(tmp_path: Path):
    locked = tmp_path / "locked"
    locked.mkdir()
    (locked / "x.py").write_text(BAD, encoding="utf-8")
    locked.chmod(0)
    try:
        result = lint_paths([locked], Config(), jobs=1, finder=ConfigFinder())
    finally:
        locked.chmod(0o755)
    assert result.errors == [f"{locked}: cannot read the folder (permission denied)"]

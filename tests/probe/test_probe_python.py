"""`tapelint probe --python PATH`: the script runs in the project's own interpreter, which has TensorFlow but
not tapelint; a bad interpreter is a one-line usage error."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(__file__).resolve().parent / "scripts"
# What the project's interpreter lacks: tapelint itself and what only its static pass and editor server need
# (Keras needs rich, so it stays).
LEFT_OUT = ("tapelint", "__editable__", "_tapelint", "libcst", "typer", "pygls", "lsprotocol")


def tapelint(*args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "tapelint", *args], capture_output=True, text=True, cwd=str(cwd),
                          timeout=600)


def base_python() -> str:
    """The interpreter this virtualenv was made from (a venv cannot be made from inside another's python)."""
    return os.path.join(sys.base_prefix, "bin", f"python{sys.version_info[0]}.{sys.version_info[1]}")


def make_venv(where: Path, with_tensorflow: bool) -> Path:
    subprocess.run([base_python(), "-m", "venv", "--without-pip", str(where)], check=True, timeout=120)
    if with_tensorflow:
        # The packages of tapelint's own environment, minus tapelint and what only its static pass needs.
        shelf = where.parent / f"{where.name}-packages"
        shelf.mkdir()
        site = Path(sysconfig.get_paths()["purelib"])
        for entry in site.iterdir():
            if not entry.name.startswith(LEFT_OUT) and not entry.name.endswith(".pth"):
                (shelf / entry.name).symlink_to(entry)
        packages = where / "lib" / f"python{sys.version_info[0]}.{sys.version_info[1]}" / "site-packages"
        (packages / "project-packages.pth").write_text(str(shelf) + "\n", encoding="utf-8")
    return where / "bin" / "python"


def test_probe_runs_the_script_in_the_given_interpreter(tmp_path):
    python = make_venv(tmp_path / "project-venv", with_tensorflow=True)
    lacks = subprocess.run([str(python), "-c", "import importlib.util as u; print(u.find_spec('tapelint'), "
                            "u.find_spec('libcst'))"], capture_output=True, text=True, cwd=str(tmp_path))
    assert lacks.stdout.split() == ["None", "None"]
    script = tmp_path / "train.py"
    script.write_text(
        "import sys\n"
        f"open({str(tmp_path / 'prefix.txt')!r}, 'w').write(sys.prefix)\n"
        + (SCRIPTS / "correct_loop.py").read_text(encoding="utf-8"), encoding="utf-8")
    # Run from elsewhere than the source tree, so the child finds tapelint only through the probe's own path.
    done = tapelint("probe", str(script), "--python", str(python), "--steps", "2", "--format", "json", cwd=tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["probe"]["ok"] and report["probe"]["steps"] == 2
    assert (tmp_path / "prefix.txt").read_text() == str(tmp_path / "project-venv")


def test_interpreter_without_tensorflow_is_a_one_line_error(tmp_path):
    python = make_venv(tmp_path / "bare-venv", with_tensorflow=False)
    done = tapelint("probe", str(SCRIPTS / "correct_loop.py"), "--python", str(python))
    assert done.returncode == 2
    assert done.stderr.strip().count("\n") == 0
    assert "has no TensorFlow" in done.stderr and str(python) in done.stderr


def test_missing_or_too_old_interpreter_is_a_one_line_error(tmp_path):
    done = tapelint("probe", str(SCRIPTS / "correct_loop.py"), "--python", str(tmp_path / "nope" / "python"))
    assert done.returncode == 2 and "no such file" in done.stderr
    old = tmp_path / "python3.8"
    old.write_text("#!/bin/sh\necho 3 8 1\n")  # answers the version check as a Python 3.8 with TensorFlow would
    old.chmod(0o755)
    done = tapelint("probe", str(SCRIPTS / "correct_loop.py"), "--python", str(old))
    assert done.returncode == 2
    assert "Python 3.8 is too old" in done.stderr and done.stderr.strip().count("\n") == 0

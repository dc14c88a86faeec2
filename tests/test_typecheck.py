"""mypy finds no error in tapelint (its settings: pyproject.toml's [tool.mypy]; how it runs: tests/run_mypy.py)."""

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow
def test_mypy_finds_no_error() -> None:
    pytest.importorskip("mypy")
    done = subprocess.run([sys.executable, str(ROOT / "tests" / "run_mypy.py")], cwd=ROOT,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, f"mypy failed ({done.returncode}):\n{done.stdout}{done.stderr}"

from __future__ import annotations

import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


@pytest.fixture
def tapelint_cmd() -> list[str]:
    return [sys.executable, "-m", "tapelint"]


# Vendored real-world programs are lint inputs, not tests.
collect_ignore_glob = ["realworld/files/*"]

# The fast tier (`python -m pytest -m "not slow"`) leaves out what takes more than seconds: linting the
# installed packages, TensorFlow probe runs, subprocess-driven CLI, pre-commit and editor-server tests,
# and the real-world corpus. CI runs everything.
SLOW_FILES = frozenset({
    "test_installed_packages.py", "test_probe.py", "test_cli.py", "test_fixes_cli.py", "test_precommit.py",
    "test_lsp.py", "test_realworld.py",
})


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    for item in items:
        if item.path.name in SLOW_FILES:
            item.add_marker(pytest.mark.slow)

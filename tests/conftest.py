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


def _all_slow(path: Path) -> bool:
    if path.name in SLOW_FILES:
        return True
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return False
    return any(line.startswith("pytestmark = pytest.mark.slow") for line in text.splitlines())


def pytest_ignore_collect(collection_path, config):  # type: ignore[no-untyped-def]
    """Under `-m "not slow"`, a module whose every test is slow is not even imported: importing the probe's
    test modules imports TensorFlow (seconds of the fast tier, for tests it then deselects)."""
    if (config.getoption("markexpr", "") or "").replace(" ", "") != "notslow":
        return None
    if collection_path.suffix == ".py" and collection_path.name.startswith("test_") and _all_slow(collection_path):
        return True
    return None


# Files whose tests run the CLI in a subprocess through a helper of this name (0.6-0.8 s each): the tests
# that call it are slow, the others in the file stay in the fast tier.
SUBPROCESS_HELPERS = {"test_notebooks.py": "tapelint", "test_formats.py": "tapelint"}


def pytest_collection_modifyitems(config, items):  # type: ignore[no-untyped-def]
    for item in items:
        helper = SUBPROCESS_HELPERS.get(item.path.name)
        function = getattr(item, "function", None)
        if item.path.name in SLOW_FILES or (
                helper is not None and function is not None and helper in function.__code__.co_names):
            item.add_marker(pytest.mark.slow)

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

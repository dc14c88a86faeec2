"""Start-up cost: `tapelint --version` and `import tapelint` do not pay for libcst, the rules or TensorFlow."""

from __future__ import annotations

import subprocess
import sys


def _imported(*args: str) -> str:
    run = subprocess.run([sys.executable, "-X", "importtime", *args], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-500:]
    return run.stderr


def test_version_imports_no_libcst_and_no_rules():
    imported = _imported("-m", "tapelint", "--version")
    assert "libcst" not in imported
    assert "tapelint.rules" not in imported and "tapelint.engine" not in imported


def test_importing_tapelint_is_light_and_its_public_names_still_work():
    imported = _imported("-c", "import tapelint")
    assert "libcst" not in imported
    run = subprocess.run([sys.executable, "-c", "from tapelint import lint_source, Config, Diagnostic, Rule; "
                          "print(len(lint_source('import tensorflow as tf\\nopt = tf.keras.optimizers.Adam(lr=1)\\n', "
                          "'t.py', Config())))"], capture_output=True, text=True, timeout=120)
    assert run.stdout.strip() == "1", run.stderr[-500:]

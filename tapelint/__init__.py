"""tapelint: finds why a TensorFlow GradientTape training loop silently fails to learn.

Importing tapelint never imports tensorflow; the runtime probe lives in `tapelint.probe`. The public names
below are imported on first use (PEP 562), so `tapelint --version` and the command line's start-up do not
pay for libcst and the rules.
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing.TYPE_CHECKING without importing typing (5 ms of every start)

__version__ = "0.1.0"

_PUBLIC = {
    "Config": "tapelint.config",
    "Confidence": "tapelint.diagnostic",
    "Diagnostic": "tapelint.diagnostic",
    "Fix": "tapelint.diagnostic",
    "Related": "tapelint.diagnostic",
    "Severity": "tapelint.diagnostic",
    "TextEdit": "tapelint.diagnostic",
    "lint_source": "tapelint.engine",
    "Invalid": "tapelint.rule",
    "Option": "tapelint.rule",
    "Rule": "tapelint.rule",
    "Valid": "tapelint.rule",
    "lint_paths": "tapelint.runner",
}

if TYPE_CHECKING:  # pragma: no cover
    from typing import Any

    from tapelint.config import Config
    from tapelint.diagnostic import Confidence, Diagnostic, Fix, Related, Severity, TextEdit
    from tapelint.engine import lint_source
    from tapelint.rule import Invalid, Option, Rule, Valid
    from tapelint.runner import lint_paths


def __getattr__(name: str) -> Any:
    module = _PUBLIC.get(name)
    if module is None:
        raise AttributeError(f"module 'tapelint' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_PUBLIC])


__all__ = [
    "Config", "Confidence", "Diagnostic", "Fix", "Invalid", "Option", "Rule", "Severity", "TextEdit", "Valid",
    "lint_paths", "lint_source", "__version__",
]

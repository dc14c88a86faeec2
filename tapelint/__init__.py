"""tapelint: finds why a TensorFlow GradientTape training loop silently fails to learn.

Importing tapelint never imports tensorflow; the runtime probe lives in `tapelint.probe`.
"""

from __future__ import annotations

__version__ = "0.1.0"

from tapelint.config import Config  # noqa: E402
from tapelint.diagnostic import Confidence, Diagnostic, Fix, Severity, TextEdit  # noqa: E402
from tapelint.engine import lint_source  # noqa: E402
from tapelint.rule import Invalid, Option, Rule, Valid  # noqa: E402
from tapelint.runner import lint_paths  # noqa: E402

__all__ = [
    "Config", "Confidence", "Diagnostic", "Fix", "Invalid", "Option", "Rule", "Severity", "TextEdit", "Valid",
    "lint_paths", "lint_source", "__version__",
]

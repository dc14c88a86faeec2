"""Reporters turn diagnostics into text for people and machines. Each is a function -> str."""

from __future__ import annotations

from typing import Callable

from tapelint.reporters.json import render_json
from tapelint.reporters.text import render_text

Reporter = Callable[..., str]

REPORTERS: dict[str, Reporter] = {
    "text": render_text,
    "json": render_json,
}

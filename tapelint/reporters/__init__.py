"""Reporters turn diagnostics into text for people and machines. Each is a function -> str."""

from __future__ import annotations

from typing import Callable

from tapelint.reporters.github import render_github
from tapelint.reporters.json import render_json
from tapelint.reporters.junit import render_junit
from tapelint.reporters.sarif import render_sarif
from tapelint.reporters.text import render_text

Reporter = Callable[..., str]

REPORTERS: dict[str, Reporter] = {
    "text": render_text,
    "json": render_json,
    "sarif": render_sarif,
    "github": render_github,
    "junit": render_junit,
}

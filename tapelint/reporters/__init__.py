"""Reporters turn diagnostics into text for people and machines. Each is a function -> str."""

from __future__ import annotations

from typing import Callable

Reporter = Callable[..., str]

# The output formats; each reporter is imported only when its format is asked for (a run imports one).
FORMATS = ("text", "json", "sarif", "github", "junit", "gitlab", "azure")


def reporter(name: str) -> Reporter:
    """The function that renders `name` (one of FORMATS)."""
    if name == "json":
        from tapelint.reporters.json import render_json
        return render_json
    if name == "sarif":
        from tapelint.reporters.sarif import render_sarif
        return render_sarif
    if name == "github":
        from tapelint.reporters.github import render_github
        return render_github
    if name == "junit":
        from tapelint.reporters.junit import render_junit
        return render_junit
    if name == "gitlab":
        from tapelint.reporters.gitlab import render_gitlab
        return render_gitlab
    if name == "azure":
        from tapelint.reporters.azure import render_azure
        return render_azure
    if name == "text":
        from tapelint.reporters.text import render_text
        return render_text
    raise KeyError(name)

"""GitLab Code Quality: a JSON list of issues, shown on merge requests. Each issue's fingerprint is the
finding's baseline key hashed (tapelint.baseline), so it stays the same when the code around it moves and
GitLab does not see a moved finding as fixed and new."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Callable

from tapelint.baseline import keyed, relative_path
from tapelint.diagnostic import Diagnostic, Severity
from tapelint.escape import unicode_strings
from tapelint.reporters.related import related_suffix

SEVERITIES = {Severity.ERROR: "critical", Severity.WARNING: "major", Severity.INFO: "info"}


def project_root() -> Path:
    """Paths in the report are relative to the repository GitLab checked out (CI_PROJECT_DIR in a job),
    else to the current folder."""
    return Path(os.environ.get("CI_PROJECT_DIR") or ".")


def render_gitlab(diagnostics: list[Diagnostic], files_checked: int = 0, *,
                  sources: Callable[[str, int | None], list[str] | None] | None = None, **_: object) -> str:
    if sources is None:
        from tapelint.reporters.terminal import SourceFiles

        sources = SourceFiles()
    root = project_root()
    issues = []
    for key, occurrence, d in keyed(diagnostics, root, sources):
        description = f"{d.code} {d.message}{related_suffix(d)}"
        if d.cell is not None:
            # Cell lines are not lines of the .ipynb file: the issue points at the file, the text at the cell.
            description = f"{d.code} cell {d.cell}, line {d.line}: {d.message}{related_suffix(d)}"
        lines = {"begin": d.line, "end": max(d.end_line, d.line)} if d.cell is None else {"begin": 1}
        issues.append({
            "description": description,
            "check_name": f"{d.code} {d.name}",
            "fingerprint": key.digest(occurrence),
            "severity": SEVERITIES[d.severity],
            "location": {"path": relative_path(d.path, root), "lines": lines},
        })
    return json.dumps(unicode_strings(issues), indent=2) + "\n"

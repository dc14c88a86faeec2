"""GitHub Actions workflow commands: each finding becomes an annotation on the pull request."""

from __future__ import annotations

from tapelint.diagnostic import Diagnostic, Severity
from tapelint.escape import printable
from tapelint.reporters.related import related_suffix

COMMANDS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "notice"}


def _data(text: str) -> str:
    # Newlines are the workflow command's own escapes; other control characters would reach the log raw.
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    return _data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(diagnostics: list[Diagnostic], files_checked: int = 0, **_: object) -> str:
    lines = []
    for d in diagnostics:
        title = f"{d.code} {d.name}"
        if d.cell is None:
            where = (f"file={_property(d.path)},line={d.line},col={d.column + 1},"
                     f"endLine={d.end_line},endColumn={d.end_column + 1}")
            message = d.message + related_suffix(d)
        else:
            # Cell lines are not lines of the .ipynb file: annotate the file, say where in the message.
            where = f"file={_property(d.path)}"
            message = f"cell {d.cell}, line {d.line}, column {d.column + 1}: {d.message}{related_suffix(d)}"
        lines.append(f"::{COMMANDS[d.severity]} {where},title={_property(title)}::{_data(message)}")
    return "".join(line + "\n" for line in lines)

"""Azure Pipelines logging commands: each finding becomes an issue on the build
(`##vso[task.logissue type=error;sourcepath=...;linenumber=...;columnnumber=...;code=...]message`)."""

from __future__ import annotations

from tapelint.diagnostic import Diagnostic, Severity
from tapelint.escape import printable
from tapelint.reporters.related import related_suffix

# Azure has two issue types; an info finding is a warning there.
TYPES = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "warning"}


def _message(text: str) -> str:
    # The agent's own escapes (%AZP25 first, so that no other escape is read twice); other control
    # characters would reach the log raw.
    return printable(text.replace("%", "%AZP25").replace("\r", "%0D").replace("\n", "%0A"))


def _property(text: str) -> str:
    # In a property value `;` ends the property and `]` the property list.
    return _message(text).replace(";", "%3B").replace("]", "%5D")


def render_azure(diagnostics: list[Diagnostic], files_checked: int = 0, **_: object) -> str:
    lines = []
    for d in diagnostics:
        properties = [f"type={TYPES[d.severity]}", f"sourcepath={_property(d.path)}"]
        message = f"{d.message}{related_suffix(d)} [{d.name}]"
        if d.cell is None:
            properties += [f"linenumber={d.line}", f"columnnumber={d.column + 1}"]
        else:
            # Cell lines are not lines of the .ipynb file: name the file, say where in the message.
            message = f"cell {d.cell}, line {d.line}, column {d.column + 1}: {message}"
        properties.append(f"code={_property(d.code)}")
        lines.append(f"##vso[task.logissue {';'.join(properties)}]{_message(message)}")
    return "".join(line + "\n" for line in lines)

"""How the text reports name the places a finding's cause lies (`Diagnostic.related`): on the finding's own
line (concise, and the editor's message for a client without related information) or as `path:line:col`."""

from __future__ import annotations

from tapelint.diagnostic import Diagnostic, Related
from tapelint.escape import printable


def related_suffix(d: Diagnostic) -> str:
    """` (the softmax at line 71)`: where the cause lies, on the finding's own line; or nothing."""
    if not d.related:
        return ""
    return " (" + "; ".join(f"{printable(r.message)} at {printable(r.where(d.path, d.cell))}" for r in d.related) + ")"


def related_location(r: Related) -> str:
    """`path:line:col` of a related place (`path:cell N:line:col` in a notebook), as a finding's is written."""
    cell = f":cell {r.cell}" if r.cell is not None else ""
    return f"{printable(r.path)}{cell}:{r.line}:{r.column + 1}"

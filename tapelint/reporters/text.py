"""The human format: `path:line:col: CODE message [name]`, then one summary line."""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from tapelint.diagnostic import Diagnostic
from tapelint.escape import printable
from tapelint.reporters.related import related_suffix

if TYPE_CHECKING:
    from tapelint.reporters.terminal import SourceLoader


def location(d: Diagnostic) -> str:
    """`path:line:col` (`path:cell N:line:col` in a notebook), the path's control characters escaped."""
    if d.cell is not None:
        return f"{printable(d.path)}:cell {d.cell}:{d.line}:{d.column + 1}"
    return f"{printable(d.path)}:{d.line}:{d.column + 1}"


def summary(diagnostics: list[Diagnostic], files_checked: int, errors: int = 0) -> str:
    if not diagnostics:
        noun = "file" if files_checked == 1 else "files"
        if errors:
            # An error may be a file that was read but not understood, or a path that is not there.
            return (f"No findings, but {errors} {'path' if errors == 1 else 'paths'} could not be checked "
                    "(see the errors above).")
        return f"All checks passed ({files_checked} {noun} checked)."
    by_severity = Counter(d.severity.value for d in diagnostics)
    parts = [f"{by_severity[s]} {s}{'s' if by_severity[s] != 1 and s != 'info' else ''}"
             for s in ("error", "warning", "info") if by_severity[s]]
    fixable = sum(1 for d in diagnostics if d.fix is not None)
    files = len({d.path for d in diagnostics})
    line = (f"Found {len(diagnostics)} finding{'s' if len(diagnostics) != 1 else ''} "
            f"({', '.join(parts)}) in {files} of {files_checked} file{'s' if files_checked != 1 else ''}.")
    if fixable:
        safe = sum(1 for d in diagnostics if d.fix is not None and d.fix.safe)
        line += f" {fixable} fixable ({safe} with --fix"
        line += f", {fixable - safe} more with --unsafe-fixes)." if fixable - safe else ")."
    return line


def render_text(diagnostics: list[Diagnostic], files_checked: int = 0, *, quiet: bool = False,
                errors: int = 0, text_format: str = "concise", color: bool = False,
                sources: SourceLoader | None = None, **_: object) -> str:
    """`concise`: one line per finding. `full`: each finding with its source line and a caret under it
    (`sources` reads the lines; without it, or when a file cannot be read, the line alone). `color` adds
    ANSI colour (tapelint.reporters.terminal decides when)."""
    if text_format != "concise" or color:
        from tapelint.reporters.terminal import Paint, render_entry

        paint = Paint(color)
        lines = [render_entry(d, text_format, paint, sources) for d in diagnostics]
    else:
        lines = [_concise(d) for d in diagnostics]
    if not quiet:
        if lines and not lines[-1].endswith("\n"):
            lines.append("")
        lines.append(summary(diagnostics, files_checked, errors))
    return "\n".join(lines).removesuffix("\n") + ("\n" if lines else "")


def _concise(d: Diagnostic) -> str:
    return f"{location(d)}: {d.code} {printable(d.message)}{related_suffix(d)} [{d.name}]" + probe_line(d)



def probe_line(d: Diagnostic) -> str:
    """The probe's verdict on its own indented line, or nothing."""
    if d.probe is None:
        return ""
    return f"\n    probe: {printable(d.probe.status)}" + (f": {printable(d.probe.evidence)}" if d.probe.evidence else "")

"""The human format: `path:line:col: CODE message [name]`, then one summary line."""

from __future__ import annotations

from collections import Counter

from tapelint.diagnostic import Diagnostic


def location(d: Diagnostic) -> str:
    if d.cell is not None:
        return f"{d.path}:cell {d.cell}:{d.line}:{d.column + 1}"
    return f"{d.path}:{d.line}:{d.column + 1}"


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
                errors: int = 0, **_: object) -> str:
    lines = []
    for d in diagnostics:
        line = f"{location(d)}: {d.code} {d.message} [{d.name}]"
        if d.probe is not None:
            line += f"\n    probe: {d.probe.status}" + (f": {d.probe.evidence}" if d.probe.evidence else "")
        lines.append(line)
    if not quiet:
        if lines:
            lines.append("")
        lines.append(summary(diagnostics, files_checked, errors))
    return "\n".join(lines) + ("\n" if lines else "")

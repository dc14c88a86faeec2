"""Text edits: applying non-overlapping edits to source text, and the diffs users read."""

from __future__ import annotations

import difflib
from pathlib import Path

from tapelint.diagnostic import Diagnostic, TextEdit
from tapelint.text import line_starts, source_lines


def apply_edits(source: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (libcst positions). Overlapping later edits are dropped."""
    starts = line_starts(source)

    def offset(line: int, column: int) -> int:
        return starts[line - 1] + column if line - 1 < len(starts) else len(source)

    spans = sorted(((offset(e.line, e.column), offset(e.end_line, e.end_column), e.text) for e in edits),
                   key=lambda s: (s[0], s[1]))
    result: list[str] = []
    cursor = 0
    for start, end, text in spans:
        if start < cursor:
            continue  # overlaps an edit already taken; the next pass will redo it if still needed
        result.append(source[cursor:start])
        result.append(text)
        cursor = end
    result.append(source[cursor:])
    return "".join(result)


def selected_fixes(diagnostics: list[Diagnostic], unsafe: bool) -> list[Diagnostic]:
    return [d for d in diagnostics if d.fix is not None and (d.fix.safe or unsafe)]


def edits_overlap(edits: list[TextEdit]) -> bool:
    spans = sorted(((e.line, e.column), (e.end_line, e.end_column)) for e in edits)
    return any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1))


def unified_diff(name: str, before: str, after: str) -> str:
    """A diff that `git apply` and `patch -p1` take as they are: `a/` and `b/` before a relative name."""
    def lines(text: str) -> list[str]:
        out = source_lines(text, keepends=True)
        if out and not out[-1].endswith(("\n", "\r")):
            out[-1] += "\n\\ No newline at end of file\n"
        return out

    relative = not Path(name).is_absolute()
    old, new = (f"a/{name}", f"b/{name}") if relative else (name, name)
    return "".join(difflib.unified_diff(lines(before), lines(after), old, new))

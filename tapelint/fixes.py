"""Applying fixes to source text, re-linting until stable, and writing files atomically."""

from __future__ import annotations

import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tapelint.config import Config
from tapelint.diagnostic import Diagnostic, TextEdit
from tapelint.engine import lint_source

MAX_PASSES = 10


def _offsets(source: str) -> list[int]:
    starts = [0]
    for index, char in enumerate(source):
        if char == "\n":
            starts.append(index + 1)
    return starts


def apply_edits(source: str, edits: list[TextEdit]) -> str:
    """Apply non-overlapping edits (libcst positions). Overlapping later edits are dropped."""
    starts = _offsets(source)

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


@dataclass
class FixOutcome:
    source: str
    applied: int
    remaining: list[Diagnostic]


def fix_source(source: str, path: str, config: Config, *, unsafe: bool = False, force: bool = True) -> FixOutcome:
    """Apply fixes pass by pass (each pass re-lints), until nothing fixable is left."""
    applied = 0
    current = source
    diagnostics = lint_source(current, path, config, force=force)
    for _ in range(MAX_PASSES):
        chosen = selected_fixes(diagnostics, unsafe)
        if not chosen:
            break
        edits: list[TextEdit] = []
        taken = 0
        for diagnostic in chosen:
            assert diagnostic.fix is not None
            candidate = edits + list(diagnostic.fix.edits)
            if _overlaps(candidate):
                continue
            edits = candidate
            taken += 1
        updated = apply_edits(current, edits)
        if updated == current:
            break
        current = updated
        applied += taken
        diagnostics = lint_source(current, path, config, force=force)
    return FixOutcome(current, applied, diagnostics)


def _overlaps(edits: list[TextEdit]) -> bool:
    spans = sorted(((e.line, e.column), (e.end_line, e.end_column)) for e in edits)
    return any(spans[i][1] > spans[i + 1][0] for i in range(len(spans) - 1))


def write_atomic(path: Path, text: str) -> None:
    """Replace a file's content in one rename, keeping its permissions; never a half-written file."""
    mode = None
    try:
        mode = stat.S_IMODE(path.stat().st_mode)
    except OSError:
        pass
    folder = path.parent
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tapelint-tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        try:
            os.unlink(temp)
        except OSError:
            pass
        raise

"""`check --add-noqa`, as ruff has it: a `# noqa: CODE` comment on each line with a finding, so that the
next run reports nothing and new code is held to the rules.

A directive goes where tapelint.suppressions reads it: on the finding's first line, or on its last line
when a comment cannot end the first one (the first line ends inside a multi-line string, or with a `\\`
continuation). An existing `# noqa: ...` list on that line gets the new codes added; other comment text
stays. A notebook gets the comments in its cells.
"""

from __future__ import annotations

import ast
import io
import tokenize
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

from tapelint.atomic import ChangedMeanwhile, refuse_to_replace, write_atomic
from tapelint.diagnostic import Diagnostic
from tapelint.errors import TapelintError
from tapelint.files import NOTEBOOK_SUFFIX, resolved
from tapelint.suppressions import parse_suppressions
from tapelint.text import source_lines


@dataclass
class NoqaRun:
    added: int = 0  # codes added
    files: int = 0  # files changed
    skipped: list[str] = field(default_factory=list)  # one line per finding no comment can carry
    errors: list[str] = field(default_factory=list)


def _comment_lines(source: str) -> set[int] | None:
    """The lines a comment can be added at the end of: those where a logical or physical line ends (a
    NEWLINE, NL or COMMENT token starts on it). None when the source does not tokenize."""
    try:
        tokens = tokenize.generate_tokens(io.StringIO(source).readline)
        return {tok.start[0] for tok in tokens
                if tok.type in (tokenize.NEWLINE, tokenize.NL, tokenize.COMMENT)}
    except (tokenize.TokenError, SyntaxError):
        return None


def _directive(existing: list[str], codes: list[str]) -> tuple[str, int]:
    """`# noqa: ...` with the existing codes first, in their spelling, then the new ones; and how many
    codes were added."""
    have = {code.upper() for code in existing}
    new = [code for code in codes if code.upper() not in have]
    return f"# noqa: {', '.join([*existing, *new])}", len(new)


def add_to_source(source: str, diagnostics: list[Diagnostic], parse_with: str | None = None
                  ) -> tuple[str, int, list[Diagnostic]]:
    """`source` with the directives added, how many codes were added, and the findings that no line
    could take a comment for. `parse_with` is the text to tokenize when it differs from `source` (a
    notebook cell with its magics masked, line for line)."""
    lines_ok = _comment_lines(parse_with if parse_with is not None else source)
    if lines_ok is None:
        return source, 0, list(diagnostics)
    wanted: dict[int, list[str]] = defaultdict(list)
    unplaced = []
    for d in diagnostics:
        line = d.line if d.line in lines_ok else d.end_line if d.end_line in lines_ok else None
        if line is None:
            unplaced.append(d)
        elif d.code not in wanted[line]:
            wanted[line].append(d.code)
    existing = parse_suppressions(source)
    lines = source_lines(source, keepends=True)
    added = 0
    for number, codes in wanted.items():
        if not 1 <= number <= len(lines):
            continue
        row = lines[number - 1]
        body = row.rstrip("\r\n")
        ending = row[len(body):]
        present = existing.lines.get(number, frozenset())
        if present is None:
            continue  # a bare `# noqa` already suppresses everything on the line
        if number in existing.directives:
            start, end, _ = existing.directives[number]
            text = body[start:end]
            listed = text.split(":", 1)[1] if ":" in text else ""
            directive, count = _directive([c.strip() for c in listed.split(",") if c.strip()], sorted(codes))
            body = body[:start] + directive + body[end:]
        else:
            directive, count = _directive([], sorted(codes))
            body = body.rstrip(" \t") + "  " + directive
        lines[number - 1] = body + ending
        added += count
    return "".join(lines), added, unplaced


def _still_reads(before: str, after: str, name: str, diagnostics: list[Diagnostic], placed: bool) -> bool:
    """Whether the new text parses wherever the old one did, and each finding is now suppressed."""
    if not placed:
        return True
    try:
        ast.parse(before)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    else:
        try:
            ast.parse(after)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return False
    found = parse_suppressions(after)
    return all(found.suppresses(d) for d in diagnostics)


def add_noqa(diagnostics: list[Diagnostic]) -> NoqaRun:
    """Add the directives to every file with a finding and write each file back atomically."""
    from tapelint.fixes import read_for_rewrite

    run = NoqaRun()
    by_path: dict[str, list[Diagnostic]] = defaultdict(list)
    for d in diagnostics:
        if d.path.startswith("<"):
            continue  # standard input: there is no file to write
        by_path[d.path].append(d)
    for name, found in sorted(by_path.items()):
        real = resolved(Path(name))
        try:
            data, text, bom, encoding = read_for_rewrite(real, name)
        except TapelintError as error:
            run.errors.append(str(error))
            continue
        if name.endswith(NOTEBOOK_SUFFIX):
            after, added, unplaced = _notebook(text, name, found)
        else:
            after, added, unplaced = add_to_source(text, found)
            if not _still_reads(text, after, name, [d for d in found if d not in unplaced], after != text):
                run.errors.append(f"{name}: adding `# noqa` comments would change how the file reads; left as it is")
                continue
        run.skipped.extend(f"{name}:{d.line}: {d.code}: no line of the finding can take a comment"
                           for d in unplaced)
        if after == text:
            continue
        refusal = refuse_to_replace(real)
        if refusal is not None:
            run.errors.append(f"{name}: {refusal}")
            continue
        try:
            write_atomic(real, ("\ufeff" if bom else "") + after, encoding, expected=data)
        except ChangedMeanwhile:
            run.errors.append(f"{name}: changed on disk meanwhile; left as it is (run --add-noqa again)")
            continue
        except UnicodeEncodeError:
            run.errors.append(f"{name}: the new text cannot be written in the file's encoding ({encoding})")
            continue
        except OSError as error:
            run.errors.append(f"{name}: cannot write ({error.strerror or error})")
            continue
        run.added += added
        run.files += 1
    return run


def _notebook(text: str, name: str, found: list[Diagnostic]) -> tuple[str, int, list[Diagnostic]]:
    from tapelint.notebooks import parse_notebook, rewrite_sources

    notebook = parse_notebook(text, name)
    cells = {cell.number: cell for cell in notebook.cells}
    sources: dict[int, str] = {}
    added = 0
    unplaced: list[Diagnostic] = []
    by_cell: dict[int, list[Diagnostic]] = defaultdict(list)
    for d in found:
        if d.cell in cells:
            by_cell[d.cell].append(d)
        else:
            unplaced.append(d)
    for number, cell_found in sorted(by_cell.items()):
        cell = cells[number]
        masked = cell.masked if len(source_lines(cell.masked)) == len(source_lines(cell.source)) else cell.source
        after, count, left = add_to_source(cell.source, cell_found, parse_with=masked)
        unplaced.extend(left)
        if after != cell.source:
            sources[cell.index] = after
            added += count
    return (rewrite_sources(notebook, sources) if sources else text), added, unplaced

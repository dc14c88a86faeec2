"""A project prelude, and how findings in it go back to the files they belong to.

A training file that imports definitions from its own project is linted as `prelude.text + source`
(tapelint.engine): the prelude is built by tapelint.project and parsed by tapelint.splicing. The lines
after the prelude are the file's own, shifted by the prelude's length; a line of the prelude is a line of
the module it came from (`Prelude.locate`). `give_back` moves each finding of the combined module, and
its fix, to its own file and lines, and applies that file's own `# noqa` comments.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from tapelint import registry
from tapelint.diagnostic import Diagnostic, Related
from tapelint.suppressions import UNUSED_NOQA, Suppressions, parse_suppressions


@dataclass
class Segment:
    """Lines `first`..`last` (1-based, inclusive) of the prelude come from `path`, starting at `start`."""

    path: str
    first: int
    last: int
    start: int
    text: str  # the whole module's text, for its suppression comments


@dataclass
class Prelude:
    text: str
    lines: int
    segments: list[Segment]
    # module file -> the line of the linting file's import that brought it in
    origin: dict[str, int] = field(default_factory=dict)
    # module file -> the hash of the bytes it was read from (what a cached result of the file rests on)
    digests: dict[str, str] = field(default_factory=dict)

    def locate(self, line: int) -> tuple[Segment, int] | None:
        for segment in self.segments:
            if segment.first <= line <= segment.last:
                return segment, segment.start + (line - segment.first)
        return None


def give_back(found: list[Diagnostic], source: str, path: str, prelude: Prelude) -> list[Diagnostic]:
    """The findings of the combined module `prelude.text + source`, each in its own file at its own lines,
    less those its file's `# noqa` comments suppress. Dropped: syntax errors and unused-`noqa` findings
    inside the prelude, and findings on lines of no file (the prelude's alias lines) or whose end is in
    another file than their start; a fix whose edits do not map so is dropped from its finding."""
    own_suppressions = parse_suppressions(source)
    others: dict[str, Suppressions] = {}
    out: list[Diagnostic] = []
    for diagnostic in found:
        if diagnostic.related:
            diagnostic = dataclasses.replace(diagnostic, related=_give_back_related(diagnostic.related, path, prelude))
        if diagnostic.line > prelude.lines:
            moved = _shift(diagnostic, path, lambda line: line - prelude.lines)
            if moved is not None and not own_suppressions.suppresses(moved):
                out.append(moved)
            continue
        located = prelude.locate(diagnostic.line)
        if located is None or diagnostic.code in (registry.SYNTAX_ERROR[0], UNUSED_NOQA[0]):
            continue
        segment, _ = located
        moved = _shift(diagnostic, segment.path, lambda line: (prelude.locate(line) or (None, None))[1])
        if moved is None:
            continue
        suppressions = others.get(segment.path)
        if suppressions is None:
            suppressions = others[segment.path] = parse_suppressions(segment.text)
        if not suppressions.suppresses(moved):
            out.append(moved)
    return sorted(out, key=Diagnostic.sort_key)


def _shift(diagnostic: Diagnostic, path: str, line_of) -> Diagnostic | None:  # type: ignore[no-untyped-def]
    line, end_line = line_of(diagnostic.line), line_of(diagnostic.end_line)
    if line is None or end_line is None:
        return None
    fix = diagnostic.fix
    if fix is not None:
        edits = []
        for edit in fix.edits:
            start, end = line_of(edit.line), line_of(edit.end_line)
            if start is None or end is None:
                fix = None
                break
            edits.append(dataclasses.replace(edit, line=start, end_line=end))
        else:
            fix = dataclasses.replace(fix, edits=tuple(edits))
    return dataclasses.replace(diagnostic, path=path, line=line, end_line=end_line, fix=fix)


def _give_back_related(related: tuple[Related, ...], path: str, prelude: Prelude) -> tuple[Related, ...]:
    """Each related place in its own file at its own lines (the linted file's, or the module of the prelude
    it came from); a place on lines of no file, or spread over two, is left out."""
    def place(line: int) -> tuple[str, int] | None:
        if line > prelude.lines:
            return path, line - prelude.lines
        located = prelude.locate(line)
        return (located[0].path, located[1]) if located is not None else None

    out = []
    for item in related:
        start, end = place(item.line), place(item.end_line)
        if start is None or end is None or start[0] != end[0]:
            continue
        out.append(dataclasses.replace(item, path=start[0], line=start[1], end_line=end[1]))
    return tuple(out)

"""`# noqa` comments: which findings they suppress, and which of them suppressed nothing (TL900).

`# noqa` (every finding on the line), `# noqa: TL001, optimizer-never-applied` (those rules, by code or by
name) and, anywhere in a file, `# tapelint: noqa` or `# tapelint: noqa: TL201` (the whole file). A finding
is suppressed by a directive on its first or its last line.
"""

from __future__ import annotations

import io
import re
import tokenize
from dataclasses import dataclass, field

from tapelint.diagnostic import Diagnostic, Fix, Severity, TextEdit
from tapelint.text import source_lines

# `# noqa`, `# noqa: TL001, TL201` (whitespace allowed before the colon, as ruff reads it). A colon with no
# code after it (`# noqa:`) is a malformed directive: it suppresses nothing rather than everything.
_NOQA = re.compile(
    r"#\s*noqa\b(?P<colon>\s*:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)?)?", re.IGNORECASE)
_FILE_NOQA = re.compile(
    r"#\s*tapelint:\s*noqa\b(?P<colon>\s*:\s*(?P<codes>[A-Za-z0-9_\-]+(?:\s*,\s*[A-Za-z0-9_\-]+)*)?)?",
    re.IGNORECASE)


@dataclass(frozen=True)
class Suppressions:
    file_all: bool
    file_codes: frozenset[str]
    lines: dict[int, frozenset[str] | None]  # None = bare noqa
    # line -> (column where the `noqa` directive starts, its end column, the directive's text)
    directives: dict[int, tuple[int, int, str]] = field(default_factory=dict)

    def suppresses(self, diagnostic: Diagnostic) -> bool:
        keys = {diagnostic.code.upper(), diagnostic.name.upper()}
        if self.file_all or keys & self.file_codes:
            return True
        for line in {diagnostic.line, diagnostic.end_line}:
            if line in self.lines:
                codes = self.lines[line]
                if codes is None or keys & codes:
                    return True
        return False


def _codes(text: str | None) -> frozenset[str] | None:
    if not text:
        return None
    return frozenset(part.strip().upper() for part in text.split(",") if part.strip())


def parse_suppressions(source: str) -> Suppressions:
    if "noqa" not in source.lower():
        return Suppressions(False, frozenset(), {})
    lines: dict[int, frozenset[str] | None] = {}
    directives: dict[int, tuple[int, int, str]] = {}
    file_all = False
    file_codes: set[str] = set()
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO(source).readline))
    except (tokenize.TokenError, SyntaxError, IndentationError):
        tokens = []
    comments = [(tok.start[0], tok.start[1], tok.string) for tok in tokens if tok.type == tokenize.COMMENT]
    for line, column, comment in comments:
        file_match = _FILE_NOQA.search(comment)
        if file_match:
            if file_match.group("colon") and not file_match.group("codes"):
                continue  # `# tapelint: noqa:` names no code: malformed, ignored
            codes = _codes(file_match.group("codes"))
            if codes is None:
                file_all = True
            else:
                file_codes |= codes
            continue
        match = _NOQA.search(comment)
        if match:
            if match.group("colon") and not match.group("codes"):
                continue  # `# noqa:` names no code: malformed, ignored
            lines[line] = _codes(match.group("codes"))
            directives[line] = (column + match.start(), column + match.end(), match.group(0))
    return Suppressions(file_all, frozenset(file_codes), lines, directives)


UNUSED_NOQA = ("TL900", "unused-noqa")


def unused_suppressions(path: str, source: str, suppressions: Suppressions, found: list[Diagnostic],
                        checked: dict[str, str]) -> list[Diagnostic]:
    """`# noqa` directives (or their TL codes) that suppressed nothing. `checked` maps the codes and
    names of the rules that ran on this file to their codes; codes of other tools are left alone."""
    lines = source_lines(source)
    unused_found: list[Diagnostic] = []
    for line, codes in sorted(suppressions.lines.items()):
        start, end, text = suppressions.directives[line]
        here = [d for d in found if line in (d.line, d.end_line)]
        if codes is None:
            if here:
                continue
            unused, keep = ["`# noqa`"], []
        else:
            ours = {c: checked[c] for c in codes if c in checked}
            used = {checked[k] for d in here for k in (d.code.upper(), d.name.upper()) if k in checked}
            unused = sorted(c for c, code in ours.items() if code not in used)
            if not unused:
                continue
            keep = sorted(c for c in codes if c not in unused)
        row = lines[line - 1] if line - 1 < len(lines) else ""
        if keep:
            replacement, title = f"# noqa: {', '.join(keep)}", "Remove the unused codes"
            edit = TextEdit(line, start, line, end, replacement)
        else:
            # Drop the directive (it starts with `#`) and the spaces before it; text after it stays a
            # comment.
            if row[end:].strip():
                edit = TextEdit(line, start, line, end, "#")
            else:
                cut = len(row[:start].rstrip())
                edit = TextEdit(line, cut, line, len(row), "")
            title = "Remove the unused `noqa`"
        what = ", ".join(unused)
        message = (f"Unused {what}: nothing is reported on this line" if codes is None
                   else f"Unused `noqa` for {what}: no such finding on this line")
        unused_found.append(Diagnostic(path, line, start, line, end, *UNUSED_NOQA, message, Severity.WARNING,
                                       fix=Fix(title, (edit,), True)))
    return unused_found


def suppressed_by_file(suppressions: Suppressions, diagnostic: Diagnostic) -> bool:
    """Whether a file-wide `# tapelint: noqa` directive suppresses the finding."""
    keys = {diagnostic.code, diagnostic.name.upper()}
    return suppressions.file_all or bool(keys & suppressions.file_codes)

"""The text report for people at a terminal: `full` (each finding with its source line and a caret under
the span, as ruff shows them) or `concise` (one line each), and ANSI colour when it is wanted."""

from __future__ import annotations

import json
import os
import unicodedata
from collections.abc import Callable
from typing import IO

from tapelint.diagnostic import Diagnostic
from tapelint.escape import printable
from tapelint.reporters.related import related_location, related_suffix

TEXT_FORMATS = ("full", "concise")
COLOR_CHOICES = ("auto", "always", "never")

# The columns a tab advances to in the snippet. The snippet is indented by its gutter, so a raw tab would
# land on a different terminal tab stop than the caret line's spaces; tabs are expanded here instead.
TAB_SIZE = 4

_SEVERITY_COLOUR = {"error": "31", "warning": "33", "info": "34"}  # red, yellow, blue
_BOLD, _GUTTER, _HELP = "1", "1;34", "1;36"

# (path, cell) -> the lines of that file or notebook cell, or None when they cannot be had.
SourceLoader = Callable[[str, "int | None"], "list[str] | None"]


def wants_color(choice: str, stream: IO[str] | None, output_file: object = None,
                environ: dict[str, str] | os._Environ[str] | None = None) -> bool:
    """Whether to colour a report. `never` and a report file never are; `always` is; `auto` follows
    NO_COLOR (set to anything: no colour), then FORCE_COLOR (set to anything but empty or `0`: colour without
    a terminal), then whether the stream is a terminal."""
    if choice == "never" or output_file is not None:
        return False
    if choice == "always":
        return True
    env = os.environ if environ is None else environ
    if "NO_COLOR" in env:
        return False
    if env.get("FORCE_COLOR", "") not in ("", "0"):
        return True
    return is_terminal(stream)


def is_terminal(stream: IO[str] | None) -> bool:
    try:
        return stream is not None and stream.isatty()
    except (AttributeError, ValueError):  # a replaced or closed stream
        return False


def default_text_format(stream: IO[str] | None, output_file: object = None) -> str:
    """`full` for a person at a terminal; `concise` for pipes, files and CI logs, which scripts read."""
    return "full" if output_file is None and is_terminal(stream) else "concise"


class Paint:
    """Wraps text in ANSI SGR codes, or leaves it alone when colour is off."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled

    def __call__(self, text: str, codes: str) -> str:
        return f"\x1b[{codes}m{text}\x1b[0m" if self.enabled and text else text

    def severity(self, diagnostic: Diagnostic, bold: bool = True) -> str:
        colour = _SEVERITY_COLOUR.get(diagnostic.severity.value, "")
        return f"{_BOLD};{colour}" if bold else colour


def header(d: Diagnostic, paint: Paint, concise: bool = True) -> str:
    """`path:line:col: CODE message [name]`, the concise line, coloured: path bold, code in its severity's colour.
    The concise line names the related places after the message; `full` gives each its own note instead."""
    place = f":cell {d.cell}:{d.line}:{d.column + 1}" if d.cell is not None else f":{d.line}:{d.column + 1}"
    return (f"{paint(printable(d.path), _BOLD)}{place}: {paint(d.code, paint.severity(d))} {printable(d.message)}"
            f"{related_suffix(d) if concise else ''} [{d.name}]" + _probe_line(d))


def _probe_line(d: Diagnostic) -> str:
    # As tapelint.reporters.text writes it (which imports this module).
    if d.probe is None:
        return ""
    return f"\n    probe: {printable(d.probe.status)}" + (f": {printable(d.probe.evidence)}" if d.probe.evidence else "")


def char_width(char: str) -> int:
    """Columns a terminal gives one character: 2 for East Asian wide and fullwidth ones, 0 for combining marks."""
    if unicodedata.combining(char) or unicodedata.category(char) in ("Mn", "Me"):
        return 0
    return 2 if unicodedata.east_asian_width(char) in ("W", "F") else 1


def display(line: str) -> tuple[str, list[int]]:
    """The line as the snippet shows it (tabs expanded; control and format characters, which could move
    the cursor or reorder the text, shown as U+FFFD), and the display column where each character of
    `line` starts, with one more entry for the end of the line."""
    shown: list[str] = []
    starts: list[int] = []
    column = 0
    for char in line:
        starts.append(column)
        if char == "\t":
            spaces = TAB_SIZE - column % TAB_SIZE
            shown.append(" " * spaces)
            column += spaces
            continue
        if unicodedata.category(char) in ("Cc", "Cf", "Zl", "Zp"):
            char = "\ufffd"
        shown.append(char)
        column += char_width(char)
    starts.append(column)
    return "".join(shown), starts


def snippet(d: Diagnostic, lines: list[str] | None, paint: Paint) -> list[str]:
    """The finding's first source line with its number, and carets under the span on it. A span over
    several lines is marked to the end of its first line and says how many more it covers."""
    if lines is None or not 1 <= d.line <= len(lines):
        return []
    text = lines[d.line - 1]
    shown, starts = display(text)
    start = min(max(d.column, 0), len(text))
    more = 0
    if d.end_line > d.line:
        end = len(text)
        # An end at column 0 of a later line is exclusive: the span stops at the end of the line before.
        more = d.end_line - d.line - (1 if d.end_column == 0 else 0)
    else:
        end = min(max(d.end_column, start), len(text))
    left, right = starts[start], starts[end]
    carets = "^" * max(right - left, 1)
    number = str(d.line)
    pad = " " * len(number)
    gutter = paint(f"{pad} |", _GUTTER)
    mark = " " * left + paint(carets, paint.severity(d))
    if more:
        mark += f" and {more} more line{'s' if more != 1 else ''}"
    return [gutter, f"{paint(f'{number} |', _GUTTER)} {shown}".rstrip(), f"{gutter} {mark}", gutter]


def notes(d: Diagnostic, paint: Paint, indent: int) -> list[str]:
    """`= note:` with each place the cause lies (`path:line:col`, which terminals and editors open), then
    `= help:` with the fix a finding has, and how to apply it."""
    out = [f"{' ' * indent}{paint('= note:', _HELP)} {printable(r.message)}: {related_location(r)}"
           for r in d.related]
    if d.fix is None:
        return out
    how = "safe fix: --fix" if d.fix.safe else "unsafe fix: --fix --unsafe-fixes"
    return [*out, f"{' ' * indent}{paint('= help:', _HELP)} {d.fix.title} ({how})"]


def render_entry(d: Diagnostic, text_format: str, paint: Paint, sources: SourceLoader | None) -> str:
    if text_format != "full":
        return header(d, paint)
    lines = sources(d.path, d.cell) if sources is not None else None
    body = snippet(d, lines, paint)
    return "\n".join([header(d, paint, concise=False), *body, *notes(d, paint, len(str(d.line)) + 1)]) + "\n"


class SourceFiles:
    """Reads the files (and notebook cells) findings point into, once each, for `full` snippets. A file
    that cannot be read now gets no snippet; `remember` gives text that is not on disk (standard input)."""

    def __init__(self) -> None:
        self._texts: dict[str, str | None] = {}
        self._lines: dict[tuple[str, int | None], list[str] | None] = {}

    def remember(self, path: str, text: str) -> None:
        self._texts[path] = text
        self._lines = {key: value for key, value in self._lines.items() if key[0] != path}

    def _text(self, path: str, notebook: bool) -> str | None:
        if path not in self._texts:
            from pathlib import Path

            from tapelint.errors import TapelintError
            from tapelint.files import MAX_NOTEBOOK_BYTES, MAX_SOURCE_BYTES, decode, read_bytes

            try:
                data = read_bytes(Path(path), MAX_NOTEBOOK_BYTES if notebook else MAX_SOURCE_BYTES)
                self._texts[path] = decode(data, path, python=not notebook)
            except (OSError, TapelintError):
                self._texts[path] = None
        return self._texts[path]

    def __call__(self, path: str, cell: int | None) -> list[str] | None:
        key = (path, cell)
        if key not in self._lines:
            text = self._text(path, cell is not None)
            self._lines[key] = None if text is None else (_cell_lines(text, cell) if cell is not None
                                                          else _python_lines(text))
        return self._lines[key]


def _python_lines(text: str) -> list[str]:
    from tapelint.text import source_lines

    return source_lines(text)


def _cell_lines(text: str, cell: int) -> list[str] | None:
    """The lines of notebook cell `cell` (numbered among all cells, as findings number them). Read from
    the JSON directly, as tapelint.notebooks does: that module brings in the engine and libcst, which a
    run answered from the cache never loads. Only `\\n` ends a line in a cell, as in Jupyter."""
    try:
        cells = json.loads(text).get("cells")
        source = cells[cell - 1].get("source", "") if isinstance(cells, list) and 1 <= cell <= len(cells) else None
    except (ValueError, AttributeError, RecursionError):
        return None
    if isinstance(source, list):
        source = "".join(part for part in source if isinstance(part, str))
    if not isinstance(source, str):
        return None
    return [line.rstrip("\r") for line in source.split("\n")]


def text_options(report_format: str, text_format: str | None, color: str, output_file: object,
                 stream: IO[str] | None, sources: SourceLoader | None = None) -> dict[str, object]:
    """The keyword arguments that style the text report for where it goes (`{}` for the other formats):
    `text_format` None means full on a terminal, concise elsewhere; `color` is auto, always or never."""
    if report_format != "text":
        return {}
    return {"text_format": text_format or default_text_format(stream, output_file),
            "color": wants_color(color, stream, output_file), "sources": sources}

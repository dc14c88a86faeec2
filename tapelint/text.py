"""Lines of Python source as Python itself counts them.

CPython's tokenizer and libcst end a line at `\\r\\n`, `\\r` or `\\n`, and nowhere else. `str.splitlines()`
also breaks at form feeds, vertical tabs, `\\x1c`-`\\x1e`, `\\x85` and U+2028/U+2029, so an index into its
result drifts from the positions libcst reports, and an edit placed by it lands on the wrong line.
Every line lookup and every edit offset goes through here.
"""

from __future__ import annotations

import re

_BREAK = re.compile(r"\r\n|\r|\n")


def line_starts(source: str) -> list[int]:
    """The offset at which each line starts (line 1 at index 0)."""
    return [0, *(match.end() for match in _BREAK.finditer(source))]


def source_lines(source: str, keepends: bool = False) -> list[str]:
    """The lines of `source`, split only where Python ends a line."""
    if not source:
        return []
    starts = line_starts(source)
    lines = [source[start:end] for start, end in zip(starts, [*starts[1:], len(source)])]
    if lines and lines[-1] == "":
        lines.pop()
    if keepends:
        return lines
    return [_BREAK.sub("", line) for line in lines]


_INDENT = re.compile(r"[ \t\f]*")


def reindent(source: str) -> tuple[str, dict[int, tuple[int, int]]]:
    """`source` with every line's leading tabs and form feeds replaced by the spaces CPython counts for
    them (a tab moves to the next multiple of 8, a form feed resets the column), and, for each changed
    line, (old indent length, new indent length). CPython compares indentation by column; libcst's
    tokenizer compares the text, so some tab/space mixes that Python runs only parse once spelled out."""
    changed: dict[int, tuple[int, int]] = {}
    out: list[str] = []
    for number, line in enumerate(source_lines(source, keepends=True), start=1):
        indent = _INDENT.match(line).group()  # type: ignore[union-attr]
        if "\t" not in indent and "\f" not in indent:
            out.append(line)
            continue
        column = 0
        for char in indent:
            if char == "\t":
                column = (column // 8 + 1) * 8
            elif char == "\f":
                column = 0
            else:
                column += 1
        out.append(" " * column + line[len(indent):])
        changed[number] = (len(indent), column)
    return "".join(out), changed

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

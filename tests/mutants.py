"""Mutants of the corpus programs for robustness checks: statements deleted, duplicated or swapped, the
text truncated, and line endings changed, so the linter meets the half-edited code an editor sends it.

Used by tests/test_properties.py (a few hundred mutants, slow tier) and benchmarks/fuzz_mutants.py
(10,000, printing the count of internal errors). `check(text)` returns what went wrong, or None.
"""

from __future__ import annotations

import ast
import random
from pathlib import Path

from tapelint.config import Config
from tapelint.engine import lint_source
from tapelint.fixes import fix_source

CORPUS = Path(__file__).parent / "corpus"


def programs() -> list[str]:
    return [p.read_text(encoding="utf-8") for p in sorted(CORPUS.rglob("*.py"))]


def _statement_spans(text: str) -> list[tuple[int, int]]:
    """(first line, last line), 0-based, of every statement at any depth."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return []
    return [(node.lineno - 1, node.end_lineno - 1) for node in ast.walk(tree)
            if isinstance(node, ast.stmt) and node.end_lineno is not None]


def mutate(text: str, rng: random.Random) -> str:
    lines = text.splitlines(keepends=True)
    spans = _statement_spans(text)
    kind = rng.choice(("delete", "duplicate", "swap", "truncate", "dedent", "line-ends", "delete", "swap"))
    if kind == "truncate" or not spans:
        return text[: rng.randrange(len(text) + 1)]
    first, last = rng.choice(spans)
    block = lines[first:last + 1]
    if kind == "delete":
        return "".join(lines[:first] + lines[last + 1:])
    if kind == "duplicate":
        where = rng.choice(spans)[0]
        return "".join(lines[:where] + block + lines[where:])
    if kind == "swap":
        other_first, other_last = rng.choice(spans)
        if other_first > last:
            return "".join(lines[:first] + lines[other_first:other_last + 1] + lines[last + 1:other_first]
                           + block + lines[other_last + 1:])
        return "".join(lines[:first] + block[::-1] + lines[last + 1:])
    if kind == "dedent":
        return "".join(lines[:first] + [line.lstrip(" ") for line in block] + lines[last + 1:])
    ending = rng.choice(("\r\n", "\r"))
    return "".join(line.rstrip("\r\n") + ending if line.endswith("\n") else line for line in lines)


def mutants(count: int, seed: int = 0) -> list[str]:
    rng = random.Random(seed)
    sources = programs()
    out = []
    for _ in range(count):
        text = rng.choice(sources)
        for _ in range(rng.randint(1, 3)):
            text = mutate(text, rng)
        out.append(text)
    return out


def check(text: str, *, fix: bool = True) -> str | None:
    """None when the linter behaved, else what went wrong: an exception, an internal error (TL999), output
    that differs between two runs, or a fix that does not settle."""
    config = Config()
    try:
        first = lint_source(text, "mutant.py", config, force=True)
        crashed = [d for d in first if d.code == "TL999"]
        if crashed:
            return f"internal error: {crashed[0].message}"
        if lint_source(text, "mutant.py", config, force=True) != first:
            return "two runs disagree"
        if fix and any(d.fix is not None for d in first):
            fixed = fix_source(text, "mutant.py", config).source
            if fixed != text:
                if any(d.code == "TL999" for d in lint_source(fixed, "mutant.py", config, force=True)):
                    return "internal error after the fix"
                if fix_source(fixed, "mutant.py", config).source != fixed:
                    return "a second --fix changed the text again"
                if _parses(text) and not _parses(fixed):
                    return "the fix broke a module that parsed"
    except Exception as error:  # noqa: BLE001 - the whole point is to see every escape
        return f"exception: {type(error).__name__}: {error}"
    return None


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return True

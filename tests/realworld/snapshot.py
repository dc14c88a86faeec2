"""A findings snapshot for reviewing a rule change: every rule (preview on) over the real-world corpus,
`../shared/realworld2`, the examples and tests/corpus, one sorted line per finding.

    python -m tests.realworld.snapshot /tmp/before.txt     # before the change
    python -m tests.realworld.snapshot /tmp/after.txt      # after it
    diff /tmp/before.txt /tmp/after.txt

Not a test: the diff is read by a person, who judges each added or removed finding (and each related
place, on an indented `related:` line under its finding).
"""

from __future__ import annotations

import sys
from pathlib import Path

from tapelint.config import parse
from tapelint.registry import index
from tapelint.runner import lint_paths

ROOT = Path(__file__).resolve().parents[2]


def folders() -> list[Path]:
    found = sorted(p for p in (ROOT / "tests/realworld/files").iterdir() if p.is_dir())
    shared = ROOT.parent / "shared/realworld2/corpus"
    if shared.is_dir():
        found.append(shared)
    return [*found, ROOT / "examples", ROOT / "tests/corpus"]


def short(path: str) -> str:
    where = str(path)
    for base in (ROOT, ROOT.parent):
        if where.startswith(str(base) + "/"):
            return where[len(str(base)) + 1:]
    return where


def main(argv: list[str]) -> int:
    prefixes = sorted({rule.code[:3] for rule in index()})
    config = parse({"select": prefixes, "preview": True}, "snapshot", None)
    result = lint_paths(folders(), config, jobs=2)
    lines = []
    for d in result.diagnostics:
        cell = d.cell
        # A finding's related places follow it, one indented line each, so that a diff shows them as added
        # lines under an unchanged finding.
        notes = "".join(f"\n    related: {short(r.path)}:{r.cell or ''}:{r.line} {r.message}" for r in d.related)
        lines.append(f"{short(d.path)}:{cell or ''}:{d.line} {d.code} {d.message[:100]}{notes}")
    text = "\n".join(sorted(lines)) + "\n"
    if len(argv) > 1:
        Path(argv[1]).write_text(text)
        print(f"{len(lines)} findings -> {argv[1]}")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))

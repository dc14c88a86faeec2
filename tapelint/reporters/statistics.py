"""`--statistics`: how many findings each rule has, most first, as ruff prints them."""

from __future__ import annotations

import json
from collections import Counter

from tapelint.diagnostic import Diagnostic


def statistics(diagnostics: list[Diagnostic]) -> list[dict]:
    counts = Counter((d.code, d.name) for d in diagnostics)
    fixable = Counter((d.code, d.name) for d in diagnostics if d.fix is not None and d.fix.safe)
    rows = [{"code": code, "name": name, "count": count, "fixable": fixable[(code, name)]}
            for (code, name), count in counts.items()]
    return sorted(rows, key=lambda row: (-row["count"], row["code"]))


def render_statistics(diagnostics: list[Diagnostic], output_format: str = "text") -> str:
    rows = statistics(diagnostics)
    if output_format == "json":
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    width = max(len(str(row["count"])) for row in rows)
    code_width = max(len(row["code"]) for row in rows)
    # `[ ]` where not every finding is safely fixable, as ruff prints it, so the names line up.
    lines = [f"{row['count']:>{width}}\t{row['code']:<{code_width}}\t{'[*]' if row['fixable'] == row['count'] else '[ ]'} "
             f"{row['name']}" for row in rows]
    return "\n".join(lines) + "\n"

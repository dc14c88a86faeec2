"""The stable machine format: one JSON object (schema in the README)."""

from __future__ import annotations

import json
from collections import Counter

from tapelint.diagnostic import Diagnostic
from tapelint.escape import unicode_strings

SCHEMA_VERSION = 1


def render_json(diagnostics: list[Diagnostic], files_checked: int = 0, **_: object) -> str:
    from tapelint import __version__

    by_severity = Counter(d.severity.value for d in diagnostics)
    by_code = Counter(d.code for d in diagnostics)
    payload = {
        "version": __version__,
        "schema": SCHEMA_VERSION,
        "diagnostics": [unicode_strings(d.to_dict()) for d in diagnostics],
        "summary": {
            "files_checked": files_checked,
            "total": len(diagnostics),
            "by_severity": {s: by_severity.get(s, 0) for s in ("error", "warning", "info")},
            "by_code": dict(sorted(by_code.items())),
            "fixable": sum(1 for d in diagnostics if d.fix is not None),
        },
    }
    return json.dumps(payload, indent=2) + "\n"

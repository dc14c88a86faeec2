"""SARIF 2.1.0, the format code-scanning services (GitHub, GitLab, Azure DevOps) read."""

from __future__ import annotations

import json
from pathlib import Path
from urllib.parse import quote

from tapelint.diagnostic import Diagnostic, Related, Severity
from tapelint.escape import unicode_strings, unicode_text

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"
LEVELS = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _uri(path: str) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            p = p.relative_to(Path.cwd())
        except ValueError:
            return p.as_uri()
    # The bytes of the name, as a URI: a name that is not UTF-8 keeps its bytes (%FF), not a crash.
    return quote(unicode_text(p.as_posix()).encode("utf-8") if _lone_surrogates(p.as_posix())
                 else p.as_posix().encode("utf-8", "surrogateescape"))


def _lone_surrogates(text: str) -> bool:
    """Surrogates no byte of a name stands for (not from the file system, which gives U+DC80-U+DCFF)."""
    return any(0xD800 <= ord(c) <= 0xDFFF and not 0xDC80 <= ord(c) <= 0xDCFF for c in text)


def _rule_descriptors() -> list[dict]:
    from tapelint import docs, registry

    descriptors = []
    for rule in registry.all_rules():
        descriptor: dict = {
            "id": rule.code,
            "name": rule.name,
            "shortDescription": {"text": docs.summary(rule)},
            "fullDescription": {"text": " ".join(docs.sections(rule).get("What it does", "").split())
                                or docs.summary(rule)},
            "help": {"text": rule.docs(), "markdown": rule.docs()},
            "defaultConfiguration": {"level": LEVELS[rule.severity],
                                     "enabled": rule.default_enabled and docs.preview_reason(rule) is None},
            "properties": {"confidence": rule.confidence.value, "fixable": rule.fixable,
                           "runtimeOnly": rule.runtime_only, "preview": docs.preview_reason(rule) is not None},
        }
        uri = docs.help_uri(rule)
        if uri:
            descriptor["helpUri"] = uri
        descriptors.append(descriptor)
    for code, name, meaning in docs.OTHER_CODES:
        descriptors.append({"id": code, "name": name, "shortDescription": {"text": meaning},
                            "fullDescription": {"text": meaning},
                            "defaultConfiguration": {"level": "error"}})
    return descriptors


def _region(line: int, column: int, end_line: int, end_column: int) -> dict:
    # SARIF columns are 1-based like ours once shifted; an empty range still needs endColumn > startColumn - 1.
    return {"startLine": line, "startColumn": column + 1, "endLine": max(end_line, line),
            "endColumn": max(end_column + 1, column + 1) if end_line <= line else end_column + 1}


def _result(d: Diagnostic, rule_index: dict[str, int]) -> dict:
    location = {"physicalLocation": {"artifactLocation": {"uri": _uri(d.path)},
                                     "region": _region(d.line, d.column, d.end_line, d.end_column)}}
    result: dict = {
        "ruleId": d.code,
        "level": LEVELS[d.severity],
        "message": {"text": d.message if d.cell is None else f"cell {d.cell}: {d.message}"},
        "locations": [location],
        "properties": {"name": d.name, "confidence": d.confidence.value},
    }
    if d.code in rule_index:
        result["ruleIndex"] = rule_index[d.code]
    if d.related:
        result["relatedLocations"] = [_related_location(i, r) for i, r in enumerate(d.related)]
    if d.cell is not None:
        # Lines and columns of a notebook finding count within its cell, not within the JSON file.
        result["properties"]["cell"] = d.cell
    if d.probe is not None:
        result["properties"]["probe"] = d.probe.to_dict()
    if d.fix is not None and d.cell is None:
        result["fixes"] = [{
            "description": {"text": f"{d.fix.title} ({d.fix.applicability})"},
            "artifactChanges": [{
                "artifactLocation": {"uri": _uri(d.path)},
                "replacements": [
                    {"deletedRegion": _region(e.line, e.column, e.end_line, e.end_column),
                     "insertedContent": {"text": e.text}}
                    for e in d.fix.edits
                ],
            }],
        }]
    return result


def _related_location(index: int, r: Related) -> dict:
    """A place the cause lies; in a notebook its lines count within its cell, which the message names."""
    location: dict = {
        "id": index,
        "physicalLocation": {"artifactLocation": {"uri": _uri(r.path)},
                             "region": _region(r.line, r.column, r.end_line, r.end_column)},
        "message": {"text": r.message if r.cell is None else f"cell {r.cell}: {r.message}"},
    }
    if r.cell is not None:
        location["properties"] = {"cell": r.cell}
    return location


def render_sarif(diagnostics: list[Diagnostic], files_checked: int = 0, **_: object) -> str:
    from tapelint import __version__

    rules = _rule_descriptors()
    rule_index = {r["id"]: i for i, r in enumerate(rules)}
    payload = {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {"name": "tapelint", "version": __version__, "semanticVersion": __version__,
                                "rules": rules}},
            "columnKind": "unicodeCodePoints",
            "results": [unicode_strings(_result(d, rule_index)) for d in diagnostics],
            "invocations": [{"executionSuccessful": True,
                             "properties": {"filesChecked": files_checked}}],
        }],
    }
    return json.dumps(payload, indent=2) + "\n"

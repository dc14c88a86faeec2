"""Runs a rule's VALID and INVALID examples: they are its unit tests and its documentation."""

from __future__ import annotations

from typing import Any, Mapping

from tapelint import config as config_mod
from tapelint.diagnostic import Diagnostic
from tapelint.engine import lint_source
from tapelint.fixes import fix_source
from tapelint.rule import Invalid, Rule, Valid


def example_config(rule: type[Rule], table: Mapping[str, Any]) -> config_mod.Config:
    data = dict(table)
    data.setdefault("select", [rule.code])
    data.setdefault("preview", True)  # the examples test what the rule finds, whether or not it is in preview
    return config_mod.parse(data, f"{rule.code} example", None)


def findings(rule: type[Rule], code: str, table: Mapping[str, Any]) -> list[Diagnostic]:
    diagnostics = lint_source(code, "example.py", example_config(rule, table))
    unexpected = [d for d in diagnostics if d.code in ("TL000", "TL999")]
    assert not unexpected, f"{rule.code} example did not lint cleanly: {unexpected}"
    return [d for d in diagnostics if d.code == rule.code]


def check_valid(rule: type[Rule], example: Valid) -> None:
    found = findings(rule, example.code, example.config)
    assert not found, f"{rule.code} reported valid code ({example.why}):\n{example.code}\n{found}"


def check_invalid(rule: type[Rule], example: Invalid) -> None:
    found = findings(rule, example.code, example.config)
    assert len(found) == example.count, (
        f"{rule.code} expected {example.count} finding(s), got {len(found)}:\n{example.code}\n{found}"
    )
    first = found[0]
    if example.line is not None:
        assert first.line == example.line, f"{rule.code}: line {first.line} != {example.line}"
    if example.column is not None:
        assert first.column + 1 == example.column, f"{rule.code}: column {first.column + 1} != {example.column}"
    if example.message_contains is not None:
        assert any(example.message_contains in d.message for d in found), [d.message for d in found]
    for diagnostic in found:
        assert diagnostic.message and not diagnostic.message.endswith("."), diagnostic.message
    if example.expected_fix is not None:
        config = example_config(rule, example.config)
        outcome = fix_source(example.code, "example.py", config, unsafe=True)
        assert outcome.source == example.expected_fix, f"{rule.code} fix gave:\n{outcome.source}"
        compile(outcome.source, "fixed.py", "exec")
        assert not [d for d in outcome.remaining if d.code == rule.code], f"{rule.code} fix left findings: {outcome.remaining}"
        again = fix_source(outcome.source, "example.py", config, unsafe=True)
        assert again.source == outcome.source and again.applied == 0, "fix is not idempotent"

"""Trigger words decide whether a file is parsed at all: a trigger that is too narrow silently drops
findings, so each pattern is checked against the spellings Python allows, and every rule's reportable
examples must pass its own triggers."""

from __future__ import annotations

import pytest

from tapelint import registry
from tapelint.triggers import attribute, call_with_string_first, occurs


@pytest.mark.parametrize("text", [
    "print(layer.output_shape)",
    "print(layer . output_shape)",
    "shape = layer.\\\n    output_shape",
    "shape = (layer.  # the old attribute\n         output_shape)",
    "for l in model.layers: print(l.name, l.output_shape[1:])",
])
def test_attribute_pattern_finds_every_spelling_of_the_access(text: str) -> None:
    assert occurs(attribute("output_shape"), text)


@pytest.mark.parametrize("text", [
    "def compute_output_shape(self, input_shape):\n    return input_shape",
    "output_shape = (None, 4)",
    "layer.output_shapes",
    "'output_shape'",
])
def test_attribute_pattern_ignores_the_bare_word(text: str) -> None:
    assert not occurs(attribute("output_shape"), text)


@pytest.mark.parametrize("text", [
    'self.w = self.add_weight("w", shape=(4,))',
    "self.w = self.add_weight('w', (4,))",
    'self.w = self.add_weight(f"w_{i}", (4,))',
    'self.w = self.add_weight(\n    rb"w", (4,))',
    'self.w = self.add_weight (  # the name first\n    "w", (4,))',
    'self.w = self.add_weight(("w"), (4,))',
])
def test_string_first_pattern_finds_a_positional_name(text: str) -> None:
    assert occurs(call_with_string_first("add_weight"), text)


@pytest.mark.parametrize("text", [
    'self.w = self.add_weight(shape=(4,), name="w")',
    "self.w = self.add_weight(name, (4,))",
    'self.w = self.add_weights("w")',
    'self.w = self.my_add_weight("w")',
])
def test_string_first_pattern_ignores_keywords_and_other_names(text: str) -> None:
    assert not occurs(call_with_string_first("add_weight"), text)


def test_every_rule_example_that_must_be_reported_passes_the_rule_triggers() -> None:
    for rule in registry.all_rules():
        if rule.runtime_only:
            continue
        for example in getattr(rule, "INVALID", ()):
            assert rule.applies_to(example.code), f"{rule.code}: an INVALID example fails its own triggers"


def _findings(paths: list, monkeypatch: pytest.MonkeyPatch | None) -> set[tuple]:
    from tapelint.config import Config
    from tapelint.engine import lint_source
    from tapelint.rule import Rule

    if monkeypatch is not None:
        monkeypatch.setattr(Rule, "applies_to", classmethod(lambda cls, source: not cls.runtime_only))
    found = set()
    for path in paths:
        for d in lint_source(path.read_text(encoding="utf-8"), str(path), Config()):
            found.add((str(path), d.code, d.line, d.column, d.message))
    return found


@pytest.mark.slow
def test_triggers_never_drop_a_finding_on_the_corpora(monkeypatch: pytest.MonkeyPatch) -> None:
    """Running every rule on every file finds nothing that the trigger words would have skipped."""
    from pathlib import Path

    here = Path(__file__).parent
    paths = sorted((here / "corpus").glob("*.py")) + sorted((here / "realworld" / "files").rglob("*.py"))
    assert len(paths) > 250
    with_triggers = _findings(paths, None)
    every_rule_everywhere = _findings(paths, monkeypatch)
    assert every_rule_everywhere - with_triggers == set()


def test_patterns_stay_linear_on_banner_comments() -> None:
    """Library code is full of `# ####...` banners after a full stop; a pattern that could match such a
    line in many ways would take exponential time on it (and hang a run on the installed tensorflow)."""
    banner = "x = 1  # Done. " + "# " * 2000 + "#" * 4000 + "\n"
    text = banner * 50
    assert not occurs(attribute("output_shape"), text)
    assert not occurs(call_with_string_first("add_weight"), text.replace("Done.", "add_weight("))

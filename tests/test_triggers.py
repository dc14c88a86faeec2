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
    from tapelint import engine
    from tapelint.config import Config
    from tapelint.engine import lint_source

    if monkeypatch is not None:
        monkeypatch.setattr(engine, "applicable_rules", lambda rules, source: [r for r in rules if not r.runtime_only])
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


def test_rules_are_chosen_for_a_text_as_each_rule_alone_would_choose() -> None:
    """`applicable_rules` looks for each trigger word once per text; it must choose exactly the rules that
    `Rule.applies_to` chooses one by one (the old loop), on real files and on texts with one word."""
    from pathlib import Path

    from tapelint.rule import applicable_rules

    rules = [r for r in registry.all_rules()]
    here = Path(__file__).parent
    texts = [p.read_text(encoding="utf-8") for p in sorted((here / "corpus").glob("*.py"))[:80]]
    texts += ["", "import tensorflow as tf\n", "x.fit(", "from tensorflow import keras\nlosses = 1\n"]
    for text in texts:
        one_by_one = []
        for rule in rules:
            if rule.runtime_only:
                continue
            if any(all(occurs(w, text) for w in t) if isinstance(t, tuple) else occurs(t, text) for t in rule.triggers):
                one_by_one.append(rule)
        assert applicable_rules(rules, text) == one_by_one
        assert [r for r in rules if r.applies_to(text)] == one_by_one
    assert any(applicable_rules(rules, t) for t in texts) and not applicable_rules(rules, "")


def test_patterns_stay_linear_on_banner_comments() -> None:
    """Library code is full of `# ####...` banners after a full stop; a pattern that could match such a
    line in many ways would take exponential time on it (and hang a run on the installed tensorflow)."""
    banner = "x = 1  # Done. " + "# " * 2000 + "#" * 4000 + "\n"
    text = banner * 50
    assert not occurs(attribute("output_shape"), text)
    assert not occurs(call_with_string_first("add_weight"), text.replace("Done.", "add_weight("))


@pytest.mark.parametrize("text", [
    "", "model.output_shape", "model . \\\n output_shape", "output_shape = 3", 'w = self.add_weight("w")',
    "add_weight", 'self.add_weights("w")', "x.output_shapes",
])
def test_the_word_check_before_a_pattern_never_changes_its_answer(text: str) -> None:
    for pattern in (attribute("output_shape"), call_with_string_first("add_weight")):
        assert occurs(pattern, text) == (pattern.search(text) is not None)

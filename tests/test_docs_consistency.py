"""The rule docs are generated from the rules and must never drift: run `python -m tapelint.docs --write`."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import tapelint.rules as rules_package
from tapelint import docs
from tapelint.registry import all_rules
from tapelint.rule import Invalid, Rule, Valid

ROOT = Path(__file__).resolve().parent.parent
REGENERATE = "run `python -m tapelint.docs --write` and commit the result"
RULES = [pytest.param(rule, id=rule.code) for rule in all_rules()]


def _declared_rules() -> list[type[Rule]]:
    """Every Rule subclass in the rules package, found without the registry (which refuses duplicates)."""
    found = []
    for info in pkgutil.iter_modules(rules_package.__path__):
        module = importlib.import_module(f"{rules_package.__name__}.{info.name}")
        found.extend(v for v in vars(module).values()
                     if isinstance(v, type) and issubclass(v, Rule) and v is not Rule and v.code
                     and v.__module__ == module.__name__)
    return found


def test_docs_rules_md_is_up_to_date():
    expected = docs.rules_markdown(all_rules())
    actual = (ROOT / docs.RULES_DOC).read_text(encoding="utf-8")
    assert actual == expected, f"docs/rules.md is out of date: {REGENERATE}"


def test_readme_rule_table_is_up_to_date():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert readme == docs.readme_with_table(readme, docs.rules_table(all_rules())), (
        f"the README rule table is out of date: {REGENERATE}")


def test_every_rule_has_a_row_in_the_readme_and_a_section_in_the_docs():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rules_md = (ROOT / docs.RULES_DOC).read_text(encoding="utf-8")
    for rule in all_rules():
        assert f"| [{rule.code}](docs/rules.md#{docs.anchor(rule)}) | `{rule.name}` |" in readme
        assert f"\n## {rule.code} {rule.name}\n" in rules_md


@pytest.mark.parametrize("rule", RULES)
def test_rule_docstring_has_every_section_links_and_examples(rule):
    assert docs.problems(rule) == []


def test_no_two_rules_share_a_code_or_a_name():
    declared = _declared_rules()
    codes = [r.code for r in declared]
    names = [r.name for r in declared]
    assert len(codes) == len(set(codes)), f"duplicate codes: {sorted(c for c in codes if codes.count(c) > 1)}"
    assert len(names) == len(set(names)), f"duplicate names: {sorted(n for n in names if names.count(n) > 1)}"
    reserved = {"TL000", "TL999", "syntax-error", "internal-error"}
    assert not reserved & {*codes, *names}


def test_every_rule_appears_in_tapelint_rules_output():
    run = subprocess.run([sys.executable, "-m", "tapelint", "rules"], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    listed = {line.split()[0] for line in run.stdout.splitlines()[1:] if line.strip()}
    assert {r.code for r in _declared_rules()} <= listed


@pytest.mark.slow  # seconds: the fast tier stays under a minute; CI runs it
def test_check_mode_fails_on_stale_docs_and_write_mode_repairs_them(tmp_path: Path):
    (tmp_path / "README.md").write_text(
        f"# demo\n\n## Rules\n\n{docs.TABLE_START}\n| stale |\n{docs.TABLE_END}\n\n## Usage\n", encoding="utf-8")
    check = [sys.executable, "-m", "tapelint.docs", "--check", "--root", str(tmp_path)]
    stale = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert stale.returncode == 1
    assert "docs/rules.md is out of date" in stale.stderr and "README.md is out of date" in stale.stderr
    subprocess.run([sys.executable, "-m", "tapelint.docs", "--write", "--root", str(tmp_path)], check=True,
                   capture_output=True, timeout=60)
    readme = (tmp_path / "README.md").read_text(encoding="utf-8")
    assert "| stale |" not in readme and readme.endswith("## Usage\n") and "| [TL501]" in readme
    fresh = subprocess.run(check, capture_output=True, text=True, timeout=60)
    assert fresh.returncode == (1 if any(docs.problems(r) for r in all_rules()) else 0), fresh.stderr
    assert "out of date" not in fresh.stderr


def test_incomplete_rule_docs_are_named_section_by_section():
    class Undocumented(Rule):
        """
        ## What it does
        Something.

        ## References
        See the source.
        """

        code = "TL998"
        name = "undocumented-example"
        VALID = [Valid("x = 1\n")]
        INVALID = [Invalid("y = 2\n")]

    found = docs.problems(Undocumented)
    for section in ("Why is this bad?", "Example", "Use instead", "Known problems", "Options", "Fix safety"):
        assert f"TL998 undocumented-example: docstring has no '## {section}' section" in found
    assert "TL998 undocumented-example: '## References' has no http(s) link" in found
    assert "TL998 undocumented-example: needs at least 2 VALID examples, has 1" in found
    assert "TL998 undocumented-example: needs at least 2 INVALID examples, has 1" in found


def test_runtime_only_rules_may_skip_the_code_examples():
    class Measured(Rule):
        """
        ## What it does
        Measures.

        ## Why is this bad?
        Because.

        ## Known problems
        None.

        ## Options
        None.

        ## Fix safety
        No fix.

        ## References
        - https://www.tensorflow.org/guide/autodiff
        """

        code = "TL897"
        name = "measured-example"
        runtime_only = True

    assert docs.problems(Measured) == []


def test_documented_severities_are_the_ones_findings_carry():
    """A rule's docs say `error`, or `error (warning when ...)`: its examples' findings carry exactly
    those severities, no other, and every documented extra severity really occurs."""
    from tests.rule_harness import findings

    for rule in all_rules():
        if rule.runtime_only:
            continue
        seen = set()
        for example in rule.INVALID:
            seen |= {d.severity for d in findings(rule, example.code, example.config)}
        allowed = {rule.severity, *rule.also_severity}
        assert seen <= allowed, f"{rule.code} emits {sorted(s.value for s in seen - allowed)} but documents {allowed}"
        missing = set(rule.also_severity) - seen
        assert not missing, f"{rule.code} documents {sorted(s.value for s in missing)} that no example shows"

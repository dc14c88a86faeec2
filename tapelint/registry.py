"""Finds the rules in `tapelint.rules`, indexes them by code and name, and resolves selectors."""

from __future__ import annotations

import functools
import importlib
import pkgutil
from typing import Iterable

from tapelint.errors import ConfigError
from tapelint.rule import Rule

# Codes that are not rules but can be reported, selected and suppressed like them.
SYNTAX_ERROR = ("TL000", "syntax-error")
INTERNAL_ERROR = ("TL999", "internal-error")


@functools.lru_cache(maxsize=1)
def all_rules() -> tuple[type[Rule], ...]:
    import tapelint.rules as package

    found: dict[str, type[Rule]] = {}
    names: dict[str, str] = {}
    for info in sorted(pkgutil.iter_modules(package.__path__), key=lambda i: i.name):
        if not info.name.startswith("tl"):
            continue
        module = importlib.import_module(f"{package.__name__}.{info.name}")
        for value in vars(module).values():
            if isinstance(value, type) and issubclass(value, Rule) and value is not Rule and value.code:
                if value.__module__ != module.__name__:
                    continue
                if value.code in found and found[value.code] is not value:
                    raise RuntimeError(f"duplicate rule code {value.code}")
                if value.name in names and names[value.name] != value.code:
                    raise RuntimeError(f"duplicate rule name {value.name}")
                found[value.code] = value
                names[value.name] = value.code
    return tuple(found[code] for code in sorted(found))


def rule_by_key(key: str) -> type[Rule] | None:
    key = key.strip()
    for rule in all_rules():
        if rule.code == key.upper() or rule.name == key.lower():
            return rule
    return None


def _matches(rule_code: str, rule_name: str, selector: str) -> bool:
    selector = selector.strip()
    if selector.upper() == "ALL":
        return True
    if selector.lower() == rule_name:
        return True
    return selector.upper().startswith("TL") and rule_code.startswith(selector.upper())


def validate_selectors(selectors: Iterable[str], where: str) -> None:
    for selector in selectors:
        special = [SYNTAX_ERROR, INTERNAL_ERROR]
        if any(_matches(r.code, r.name, selector) for r in all_rules()):
            continue
        if any(_matches(code, name, selector) for code, name in special):
            continue
        raise ConfigError(f"{where}: unknown rule selector {selector!r} (see `tapelint rules`)")


def _specificity(rule_code: str, rule_name: str, selector: str) -> int:
    """How precisely `selector` names this rule (-1: not at all). `ALL` < `TL` < `TL1` < `TL10` < `TL101`
    and the rule's name, as in ruff, so `--select TL101 --ignore TL1` keeps TL101."""
    if not _matches(rule_code, rule_name, selector):
        return -1
    selector = selector.strip()
    if selector.upper() == "ALL":
        return 0
    if selector.lower() == rule_name:
        return len(rule_code)
    return len(selector)


def resolve(select: list[str] | None, extend_select: list[str], ignore: list[str]) -> tuple[type[Rule], ...]:
    """The enabled rules: `select` (or the defaults) plus `extend_select`, minus `ignore`. When a rule is
    both selected and ignored, the more specific selector wins; at equal specificity, `ignore` does."""
    enabled = []
    for rule in all_rules():
        chosen = [_specificity(rule.code, rule.name, s) for s in (*(select or ()), *extend_select)]
        dropped = [_specificity(rule.code, rule.name, s) for s in ignore]
        on_level = max(chosen, default=-1)
        if not select and rule.default_enabled:
            on_level = max(on_level, 0)  # the defaults count as the least specific selection
        off_level = max(dropped, default=-1)
        if on_level >= 0 and on_level > off_level:
            enabled.append(rule)
    return tuple(enabled)


def code_enabled(code: str, name: str, ignore: list[str]) -> bool:
    return not any(_matches(code, name, s) for s in ignore)

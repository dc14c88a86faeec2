"""Constant folding for the numbers rules care about (learning rates, momentum, units)."""

from __future__ import annotations

import libcst as cst

from tapelint.analysis.facts import Facts, Scope
from tapelint.analysis.values import Kind, values_of


def number(facts: Facts, expr: cst.BaseExpression | None, scope: Scope, order: int | None = None) -> float | None:
    """The numeric value of `expr` at this point, when every value the value model finds for it is the
    same number (names, parameters, attributes, arithmetic); None otherwise (a sweep over learning
    rates gives several values, so no single one)."""
    if expr is None:
        return None
    found = values_of(facts, expr, scope, order if order is not None else 1 << 60)
    if not all(v.kind is Kind.CONSTANT and isinstance(v.const, (int, float)) and not isinstance(v.const, bool)
               for v in found):
        return None
    numbers = {v.const for v in found if isinstance(v.const, (int, float))}  # (all of them, checked above)
    if len(numbers) != 1:
        return None
    return float(next(iter(numbers)))


def boolean(expr: cst.BaseExpression | None) -> bool | None:
    if isinstance(expr, cst.Name):
        if expr.value == "True":
            return True
        if expr.value == "False":
            return False
    return None


def string(expr: cst.BaseExpression | None) -> str | None:
    if isinstance(expr, cst.SimpleString):
        value = expr.evaluated_value
        return value if isinstance(value, str) else None
    return None
